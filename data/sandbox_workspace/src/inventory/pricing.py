"""Prices, discounts and taxes."""
from .models import Order

TAX_RATES = {"eu-west": 0.21, "eu-north": 0.25, "us-east": 0.0, "ap-south": 0.18}
BULK_DISCOUNT = 0.05  # orders above BULK_THRESHOLD get 5% off
BULK_THRESHOLD = 500.0


def discount(amount: float) -> float:
    if amount > BULK_THRESHOLD:
        return round(amount * BULK_DISCOUNT, 2)
    return 0.0


def tax(order: Order) -> float:
    # TODO: unknown regions silently pay no tax; raise instead
    rate = TAX_RATES.get(order.region, 0.0)
    return round((order.amount - discount(order.amount)) * rate, 2)


def quote(order: Order) -> float:
    return round(order.amount - discount(order.amount) + tax(order), 2)
