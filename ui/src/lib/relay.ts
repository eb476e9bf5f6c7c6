// Ready-to-paste client settings for one connection behind the relay, per protocol: Claude
// Code and the Anthropic SDK for `anthropic`; Codex, opencode and the OpenAI SDK for `openai`;
// Gemini CLI and the google-genai SDK for `gemini`.
// The token is the relay's own credential (never a provider key).

/** Shown in place of the token while it is hidden. */
export const TOKEN_MASK = '<relay token: reveal or copy>';

export interface Snippet {
  id: string;
  title: string;
  /** Where it goes. */
  where: string;
  text: string;
}

/** The base URL a client of `protocol` uses for `slug` (OpenAI clients include `/v1`). */
export function clientBaseUrl(relayUrl: string, slug: string, protocol: string): string {
  const root = `${relayUrl.replace(/\/$/, '')}/c/${slug}`;
  return protocol === 'openai' ? `${root}/v1` : root;
}

export function relaySnippets(protocol: string, relayUrl: string, slug: string, token: string, models: string[] = []): Snippet[] {
  const base = clientBaseUrl(relayUrl, slug, protocol);
  if (protocol === 'anthropic') {
    return [
      {
        id: 'claude-code',
        title: 'Claude Code',
        where: 'shell, before running `claude`',
        text: `export ANTHROPIC_BASE_URL=${base}\nexport ANTHROPIC_AUTH_TOKEN=${token}`,
      },
      {
        id: 'anthropic-sdk',
        title: 'Anthropic SDK (Python)',
        where: 'your code',
        text: `from anthropic import Anthropic\n\nclient = Anthropic(base_url="${base}", api_key="${token}")`,
      },
    ];
  }
  if (protocol === 'gemini') {
    const model = models[0] ?? 'MODEL';
    return [
      {
        id: 'gemini-cli',
        title: 'Gemini CLI',
        where: 'shell, before running `gemini` (or ~/.gemini/.env without `export`)',
        text: `export GOOGLE_GEMINI_BASE_URL=${base}\nexport GEMINI_API_KEY=${token}`,
      },
      {
        id: 'google-genai-sdk',
        title: 'Google Gen AI SDK (Python)',
        where: 'your code',
        text: `from google import genai\n\nclient = genai.Client(api_key="${token}", http_options={"base_url": "${base}", "api_version": "v1beta"})\nclient.models.generate_content(model="${model}", contents="hello")`,
      },
    ];
  }
  const model = models[0] ?? 'MODEL';
  const opencodeModels = Object.fromEntries((models.length ? models : ['MODEL']).map((m) => [m, {}]));
  const opencode = {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      switchyard: {
        npm: '@ai-sdk/openai-compatible',
        name: `Switchyard (${slug})`,
        options: { baseURL: base, apiKey: token },
        models: opencodeModels,
      },
    },
  };
  return [
    {
      id: 'codex',
      title: 'Codex',
      where: '~/.codex/config.toml, and the token in your shell',
      text: [
        `model = "${model}"`,
        'model_provider = "switchyard"',
        '',
        '[model_providers.switchyard]',
        `name = "Switchyard (${slug})"`,
        `base_url = "${base}"`,
        'env_key = "SWITCHYARD_RELAY_TOKEN"',
        'wire_api = "responses"',
        '',
        `# shell: export SWITCHYARD_RELAY_TOKEN=${token}`,
      ].join('\n'),
    },
    {
      id: 'opencode',
      title: 'opencode',
      where: 'opencode.json',
      text: JSON.stringify(opencode, null, 2),
    },
    {
      id: 'openai-sdk',
      title: 'OpenAI SDK',
      where: 'shell (the SDKs read these), or your code',
      text: `export OPENAI_BASE_URL=${base}\nexport OPENAI_API_KEY=${token}\n\n# Python\nfrom openai import OpenAI\nclient = OpenAI(base_url="${base}", api_key="${token}")`,
    },
  ];
}

/** Copies `text`: the async clipboard API, else a hidden textarea and `execCommand`. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the textarea
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}
