"""CEL in the core: the library loaded without its command line, and expressions checked where
they are written (a name nobody gives, a field its value never has, a function CEL lacks)."""
