/**
 * URLs of a configuration that carry a secret (IPinfo's `?token=`): named
 * from the environment as `${NAME}` and put in only when the request is
 * made, and never shown with a secret in them.
 */

/** A `${NAME}` in a URL: an environment variable's name. */
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The URL with each `${NAME}` replaced by that environment variable's
 * value, URL-encoded.
 * @throws Error naming the variable when one is not set or empty
 */
export function expandUrl(url: string, env: Readonly<Record<string, string | undefined>> = process.env): string {
  return url.replace(VARIABLE, (_, name: string) => {
    const value = env[name];
    if (value === undefined || value === '') throw new Error(`its URL names \${${name}}, and ${name} is not set in the environment`);
    return encodeURIComponent(value);
  });
}

/** Query parameters whose values are secrets. */
const SECRET = /^(?:token|access_token|api_?key|apikey|key|license_key|secret|password)$/i;

/** The URL as it may be shown: the value of a secret's query parameter (`token=...`) written `***` unless it names a variable. */
export function shownUrl(url: string): string {
  return url.replace(/([?&])([^=&#]+)=([^&#]*)/g, (whole, sep: string, key: string, value: string) =>
    SECRET.test(decodeURIComponentSafe(key)) && !/^\$\{[^}]+\}$/.test(value) && value !== '' ? `${sep}${key}=***` : whole,
  );
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
