// Renders this server's own contract, /openapi.yaml, with Swagger UI (the
// bundle index.html loads before this script). It lives in a file rather
// than in the page because the page's Content-Security-Policy runs no
// inline script.
window.ui = SwaggerUIBundle({
  url: '/openapi.yaml',
  dom_id: '#swagger-ui',
  deepLinking: true,
  // No badge from the public validator: nothing on this page may leave the
  // server.
  validatorUrl: null,
});
