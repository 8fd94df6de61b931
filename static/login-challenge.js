// login-challenge.js draws the sign-in page's bot challenge (Turnstile's
// explicit-render API, or another provider's same API) in #login-challenge
// and puts its token in the form's challengeToken field; the server asks
// for it after repeated failed sign-ins from an address.
(() => {
  const box = document.getElementById("login-challenge");
  const field = document.getElementById("challenge-token");
  const status = document.getElementById("login-challenge-status");
  if (!box || !field) return;
  if (!window.turnstile || typeof window.turnstile.render !== "function") {
    status.textContent = "The check that you are not a robot could not load. Reload the page to try again.";
    return;
  }
  window.turnstile.render(box, {
    sitekey: box.dataset.sitekey,
    callback: (token) => { field.value = token; status.textContent = ""; },
    "expired-callback": () => { field.value = ""; status.textContent = "The check expired: do it again."; },
    "error-callback": () => { field.value = ""; status.textContent = "The check that you are not a robot failed. Reload the page to try again."; },
  });
})();
