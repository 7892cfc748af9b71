// Starts ReDoc on /redoc from a file, not an inline script, so the page's CSP can forbid inline scripts.
Redoc.init("/openapi.json", { hideDownloadButton: false }, document.getElementById("redoc"));
