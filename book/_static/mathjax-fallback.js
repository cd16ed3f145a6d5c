// The book serves MathJax 2.7.9 from _static/mathjax (copied there by the build). If
// that copy did not load, fetch the same version from a CDN, with the same configuration
// (MathJax reads the page's text/x-mathjax-config block when it starts).
window.addEventListener("load", function () {
  if (window.MathJax && window.MathJax.Hub) {
    return;
  }
  var script = document.createElement("script");
  script.src =
    "https://cdn.jsdelivr.net/npm/mathjax@2.7.9/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full";
  document.head.appendChild(script);
});
