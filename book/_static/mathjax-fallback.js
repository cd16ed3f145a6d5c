// The book serves MathJax 3.2.2 from _static/mathjax (copied there by the build). On a
// page with math, window.MathJax starts as the page's configuration; if the local copy
// did not load, it still has no version: then fetch the same MathJax from a CDN, which
// reads that configuration. Pages without math have no window.MathJax and load nothing.
window.addEventListener("load", function () {
  if (!window.MathJax || window.MathJax.version) {
    return;
  }
  var script = document.createElement("script");
  script.src = "https://cdn.jsdelivr.net/npm/mathjax@3.2.2/es5/tex-svg.js";
  document.head.appendChild(script);
});
