"""Host side of the serial link to the touchscreen microcontroller (built in its own issue)."""
