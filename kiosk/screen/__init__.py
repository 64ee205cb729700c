"""What the touchscreen shows: a page of the site (or an off-site URL), kept current."""
