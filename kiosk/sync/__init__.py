"""`kiosk site sync`: the venue's live website copied into the site folder and indexed.

`urls` is pure (which URLs are pages, where each one is stored, sitemaps and links, when a
sync is due); `http` makes one GET bounded in time and size (httpcore); `crawl` reads the site
with it, redirects checked hop by hop; `folder` writes a new site version and swaps it in
atomically, so a failed sync leaves the previous site and index serving.
"""
