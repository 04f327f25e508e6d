"""The converters, one module per op family; importing this package registers them all."""
from . import attention, creation, elementwise, nn, reduction, shape  # noqa: F401
