from dataclasses import dataclass


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    unit_price: float


@dataclass(frozen=True)
class Order:
    order_id: int
    customer: str
    region: str
    amount: float
    status: str = "new"

    def is_open(self) -> bool:
        return self.status in ("new", "pending")
