// Where the human token is kept and the sign-in form both pages show (the console and the consent page).

// The human token lives in the tab's sessionStorage under this key: a reload keeps it, a new tab does not.
export const TOKEN_KEY = "agentWorkspace.humanToken";
export const WORKSPACE_KEY = "agentWorkspace.workspaceId";

// The sign-in form (#signin-form, #token-input): an empty field is refused in place; the button stays disabled
// while `signIn(token)` runs, so a double click signs in once.
export function wireSignIn(signIn, showError) {
  const form = document.getElementById("signin-form");
  const input = document.getElementById("token-input");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) {
      showError(new Error("paste a human token first"), "Sign-in", form);
      input.focus();
      return;
    }
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      await signIn(token);
    } finally {
      button.disabled = false;
    }
  });
}
