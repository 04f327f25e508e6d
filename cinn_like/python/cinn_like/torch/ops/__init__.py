"""The converters, one module per op family. Importing this package registers them all: each
family's module registers its own (registry.converts) as it is imported, in any order; then each
`<view>_copy` op gets its view's converter, from the whole table."""
from . import (attention, conv, creation, distance, elementwise, indexing, nn, norm,  # noqa: F401
               pool, random, reduction, scan, segment, shape, sort, views)

views.register_copy_variants()
