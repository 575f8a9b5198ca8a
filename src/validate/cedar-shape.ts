// The shape of Cedar policy text, without a Cedar parser: a sequence of statements, each
// annotations, `permit` or `forbid`, a parenthesised scope starting with `principal`, `when` and
// `unless` conditions in braces, and a `;`; strings and comments are skipped and brackets must
// balance. It finds text that is not Cedar at all (the reference operator fails a workload whose
// policy does not parse); what is inside a scope or a condition is not checked.

type Token = { kind: "ident" | "string" | "punct" | "other"; text: string; at: number };

function tokenize(text: string): Token[] | string {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (text.startsWith("//", i)) {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end + 1;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j >= text.length) return `unterminated string at offset ${i}`;
      tokens.push({ kind: "string", text: text.slice(i, j + 1), at: i });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))![0];
      tokens.push({ kind: "ident", text: m, at: i });
      i += m.length;
    } else if ("(){}[];@,".includes(c)) {
      tokens.push({ kind: "punct", text: c, at: i });
      i++;
    } else {
      tokens.push({ kind: "other", text: c, at: i });
      i++;
    }
  }
  return tokens;
}

const CLOSE: Record<string, string> = { "(": ")", "{": "}", "[": "]" };

/** The index after the bracket group opening at `start`, or an error. */
function skipGroup(tokens: Token[], start: number): number | string {
  const stack: string[] = [];
  for (let i = start; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind !== "punct") continue;
    if (CLOSE[t.text] !== undefined) stack.push(CLOSE[t.text]!);
    else if (")}]".includes(t.text)) {
      if (stack.pop() !== t.text) return `unbalanced "${t.text}" at offset ${t.at}`;
      if (stack.length === 0) return i + 1;
    }
  }
  return `unclosed bracket at offset ${tokens[start]!.at}`;
}

/** Why `text` is not Cedar policy text, or undefined when its shape is that of policies. */
export function cedarShapeError(text: string): string | undefined {
  const tokens = tokenize(text);
  if (typeof tokens === "string") return tokens;
  if (tokens.length === 0) return "no policy";
  let i = 0;
  const at = (k: number) =>
    tokens[k] === undefined ? "the end" : `"${tokens[k].text}" at offset ${tokens[k].at}`;
  while (i < tokens.length) {
    while (tokens[i]?.text === "@") {
      if (tokens[i + 1]?.kind !== "ident")
        return `expected an annotation name after "@" at ${at(i + 1)}`;
      i += 2;
      if (tokens[i]?.text === "(") {
        const next = skipGroup(tokens, i);
        if (typeof next === "string") return next;
        i = next;
      }
    }
    const effect = tokens[i];
    if (effect?.kind !== "ident" || (effect.text !== "permit" && effect.text !== "forbid")) {
      return `expected permit or forbid, found ${at(i)}`;
    }
    i++;
    if (tokens[i]?.text !== "(") return `expected "(" after ${effect.text}, found ${at(i)}`;
    if (tokens[i + 1]?.text !== "principal")
      return `the scope must start with principal, found ${at(i + 1)}`;
    const scopeEnd = skipGroup(tokens, i);
    if (typeof scopeEnd === "string") return scopeEnd;
    i = scopeEnd;
    while (tokens[i]?.text === "when" || tokens[i]?.text === "unless") {
      if (tokens[i + 1]?.text !== "{")
        return `expected "{" after ${tokens[i]!.text}, found ${at(i + 1)}`;
      const end = skipGroup(tokens, i + 1);
      if (typeof end === "string") return end;
      i = end;
    }
    if (tokens[i]?.text !== ";") return `expected ";" or a when/unless condition, found ${at(i)}`;
    i++;
  }
  return undefined;
}
