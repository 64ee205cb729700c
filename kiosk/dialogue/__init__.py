"""The dialogue: history, acts, deixis resolution and query construction. Pure: no I/O, no clock."""
