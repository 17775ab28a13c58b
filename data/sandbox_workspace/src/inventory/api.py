"""HTTP handlers (framework-free for the sample)."""
import logging

from .models import Order
from .pricing import quote

log = logging.getLogger("api")
PAYMENT_TIMEOUT_SECONDS = 2.0


def handle_request(method: str, path: str, body: dict) -> tuple[int, dict]:
    if method == "GET" and path.startswith("/orders/"):
        return 200, {"order_id": int(path.rsplit("/", 1)[1])}
    if method == "POST" and path == "/checkout":
        order = Order(body["order_id"], body["customer"], body["region"], body["amount"])
        total = quote(order)
        log.info("checkout order_id=%s total=%.2f", order.order_id, total)
        return 201, {"order_id": order.order_id, "total": total}
    # TODO: return 405 for known paths with the wrong method
    return 404, {"error": "not found"}
