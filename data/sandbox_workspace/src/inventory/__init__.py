"""inventory-service: orders, stock and prices."""
__version__ = "0.3.1"
