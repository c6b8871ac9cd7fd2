import { type Html, html } from './html.ts';
import { page } from './layout.ts';

/** GET /login: asks once for http.token; `next` is where to go after. */
export function loginPage(next: string, failed: boolean): Html {
  const body = html`<h1>Sign in</h1>
    ${failed ? html`<p role="alert" class="problems">That is not the token. Try again.</p>` : null}
    <form method="post" action="/login" class="login">
      <input type="hidden" name="next" value="${next}">
      <div class="field">
        <label for="token">Access token (http.token)</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
      </div>
      <button type="submit">Sign in</button>
    </form>`;
  return page({ title: 'Sign in', section: 'login', logoutCsrf: null, body });
}
