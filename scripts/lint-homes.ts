/**
 * `npm run lint`'s second half: small rules that have one home in the tree must not be written
 * again beside it. A copy is usually below any copy detector's threshold (one regex, one literal),
 * so each rule is matched on the TypeScript syntax tree and refused with the name of its home.
 *
 * Usage: node scripts/lint-homes.ts [files...]   (no files: every tracked .ts file)
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

export interface Finding {
  file: string;
  line: number;
  rule: string;
  message: string;
}

interface Rule {
  name: string;
  /** The file (or files) where the rule lives: a match there is the rule itself. */
  home: string[];
  message: string;
  /** Files the rule applies to (default: every checked file). */
  applies?: (file: string) => boolean;
  match: (node: ts.Node, source: ts.SourceFile) => boolean;
}

const regexText = (node: ts.Node): string | undefined => {
  if (ts.isRegularExpressionLiteral(node)) return node.text;
  // new RegExp("...") / RegExp("...")
  if (
    (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
    ts.isIdentifier(node.expression) &&
    node.expression.text === "RegExp" &&
    node.arguments?.[0] &&
    ts.isStringLiteralLike(node.arguments[0])
  )
    return node.arguments[0].text;
  return undefined;
};

// The canonical 8-4-4-4-12 shape, or the loose "36 of hex and dashes" one (which accepts 36 dashes).
const UUID_SHAPE = /\{8\}-?\[?.*\{4\}.*\{12\}|\[0-9a-f-\]\{36\}|\[a-f0-9-\]\{36\}|\{36\}/i;
// Digits, a decimal point and a bounded count of decimals: how an amount of money is read.
const MONEY_SHAPE = /(\\d|\[0-9\])(\{[\d,]+\}|\+|\*).*\\\.(\\d|\[0-9\])\{\d?,?\d\}/;

const isPagesFile = (f: string) => f.startsWith("services/gateway/src/pages/");

/** A page size as a number: a `PAGE_SIZE = 50`, or `limit: <number>` beside the `page` it pages. */
function isPageSizeLiteral(node: ts.Node): boolean {
  if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) {
    return (
      /^(PAGE_SIZE|PAGE_LIMIT|PER_PAGE|pageSize|perPage)$/.test(node.name.text) &&
      !!node.initializer &&
      ts.isNumericLiteral(node.initializer)
    );
  }
  if (
    ts.isPropertyAssignment(node) &&
    ts.isIdentifier(node.name) &&
    node.name.text === "limit" &&
    ts.isNumericLiteral(node.initializer) &&
    ts.isObjectLiteralExpression(node.parent)
  ) {
    const keys = node.parent.properties.map((p) => (p.name && ts.isIdentifier(p.name) ? p.name.text : ""));
    // `pages` beside it: a response's pagination (an example), not a request for a page.
    return keys.includes("page") && !keys.includes("pages");
  }
  return false;
}

/** The API's word for an enum member is its name in lower case (`BANK_TRANSFER` → "bank_transfer"). */
const isMembersWord = (member: ts.Node, value: ts.Node) =>
  ts.isPropertyAccessExpression(member) &&
  ts.isStringLiteralLike(value) &&
  value.text === member.name.text.toLowerCase();

/** `SomeEnum.MEMBER`: an upper-case member of a PascalCase object, as the generated enums are. */
const isEnumMember = (n: ts.Node) =>
  ts.isPropertyAccessExpression(n) &&
  ts.isIdentifier(n.expression) &&
  /^[A-Z][A-Za-z]+$/.test(n.expression.text) &&
  /^[A-Z][A-Z0-9_]+$/.test(n.name.text);

/**
 * An enum mapped to the API's words by hand: `{ [Enum.A]: "a", [Enum.B]: "b" }` or
 * `x === Enum.A ? "a" : x === Enum.B ? "b" : …`. Labels for people ("Done", "Bank transfer") are not
 * the API's words and pass.
 */
function isEnumWordMap(node: ts.Node): boolean {
  if (ts.isObjectLiteralExpression(node)) {
    const pairs = node.properties.filter(
      (p) =>
        ts.isPropertyAssignment(p) &&
        ts.isComputedPropertyName(p.name) &&
        isEnumMember(p.name.expression) &&
        isMembersWord(p.name.expression, p.initializer),
    );
    return pairs.length >= 2;
  }
  if (ts.isConditionalExpression(node) && !ts.isConditionalExpression(node.parent)) {
    let arms = 0;
    for (let c: ts.Expression = node; ts.isConditionalExpression(c); c = c.whenFalse) {
      const cond = c.condition;
      if (
        ts.isBinaryExpression(cond) &&
        [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken].includes(
          cond.operatorToken.kind,
        )
      ) {
        const member = isEnumMember(cond.right)
          ? cond.right
          : isEnumMember(cond.left)
            ? cond.left
            : undefined;
        if (member && isMembersWord(member, c.whenTrue)) arms++;
      }
    }
    return arms >= 2;
  }
  return false;
}

/** A date written out by hand on a page: ISO sliced, or the locale's own format. */
function isDateFormat(node: ts.Node): boolean {
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return false;
  const name = node.expression.name.text;
  if (["toLocaleString", "toLocaleDateString", "toLocaleTimeString", "toUTCString"].includes(name))
    return true;
  if (name === "DateTimeFormat") return true;
  // x.toISOString().slice(...)
  const inner = node.expression.expression;
  return (
    (name === "slice" || name === "substring") &&
    ts.isCallExpression(inner) &&
    ts.isPropertyAccessExpression(inner.expression) &&
    inner.expression.name.text === "toISOString"
  );
}

/** The literal text of a template (its substitutions left out), or of a plain string. */
function templateText(node: ts.Node): string | undefined {
  if (ts.isNoSubstitutionTemplateLiteral(node) || ts.isStringLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node))
    return node.head.text + node.templateSpans.map((s) => s.literal.text).join(" ");
  return undefined;
}

// A query that reads the `currency` column of `balances`: the account's currency, read again.
const BALANCE_CURRENCY =
  /\bselect\b(?:(?!\bfrom\b)[\s\S])*\bcurrency\b(?:(?!\bfrom\b)[\s\S])*\bfrom\s+balances\b/i;

/** SQL (a tagged template, or text handed to `unsafe`) reading a balance's currency. */
function readsBalanceCurrency(node: ts.Node): boolean {
  const text = ts.isTaggedTemplateExpression(node)
    ? templateText(node.template)
    : ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === "unsafe" &&
        node.arguments[0]
      ? templateText(node.arguments[0])
      : undefined;
  return text !== undefined && BALANCE_CURRENCY.test(text);
}

/** Currencies whose decimals are not two for ISO 4217 or for a card provider: naming three of them is a table. */
const ODD_DECIMAL_CURRENCIES = new Set(
  "BIF CLP DJF GNF ISK JPY KMF KRW MGA PYG RWF UGX UYI VND VUV XAF XOF XPF BHD IQD JOD KWD LYD OMR TND".split(
    " ",
  ),
);

/** A table of currency decimals: an object keyed by, or a list of, three or more such codes. */
function isDecimalsTable(node: ts.Node): boolean {
  let codes: string[] = [];
  if (ts.isObjectLiteralExpression(node))
    codes = node.properties.flatMap((p) =>
      p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? [p.name.text] : [],
    );
  else if (ts.isArrayLiteralExpression(node))
    codes = node.elements.flatMap((e) => (ts.isStringLiteral(e) ? [e.text] : []));
  return codes.filter((c) => ODD_DECIMAL_CURRENCIES.has(c)).length >= 3;
}

export const RULES: Rule[] = [
  {
    name: "uuid-check",
    home: ["packages/platform/src/ids.ts"],
    message: "a UUID pattern outside its home: use isUuid from @hb/platform (packages/platform/src/ids.ts)",
    match: (n) => {
      const text = regexText(n);
      return text !== undefined && UUID_SHAPE.test(text);
    },
  },
  {
    name: "page-size",
    home: ["packages/platform/src/paging.ts"],
    message:
      "a page size written as a number: use PAGE_SIZE / pageWindow from @hb/platform/paging (packages/platform/src/paging.ts)",
    match: isPageSizeLiteral,
  },
  {
    name: "money-parse",
    home: ["packages/platform/src/money.ts"],
    message:
      "an amount of money read with a regex of its own: use readMoney / readPositiveMoney from @hb/platform (packages/platform/src/money.ts)",
    match: (n) => {
      const text = regexText(n);
      return text !== undefined && MONEY_SHAPE.test(text);
    },
  },
  {
    name: "enum-words",
    home: ["packages/platform/src/enum-words.ts", "packages/platform/src/enum-words.gen.ts"],
    message:
      "an enum mapped to words by hand: use the generated *_WORDS tables and enumWord (packages/platform/src/enum-words.ts)",
    match: isEnumWordMap,
  },
  {
    name: "date-format",
    home: ["services/gateway/src/pages/format.ts"],
    message: "a date formatted on a page by hand: use when / day from services/gateway/src/pages/format.ts",
    applies: isPagesFile,
    match: isDateFormat,
  },
  {
    name: "account-currency",
    home: ["services/billing/src/account-currency.ts"],
    message:
      "the account's currency read from balances again: use accountCurrency / lockBalance from services/billing/src/account-currency.ts",
    applies: (f) => f.startsWith("services/billing/"),
    match: readsBalanceCurrency,
  },
  {
    name: "currency-decimals",
    home: ["packages/platform/src/currency-decimals.ts"],
    message:
      "a table of currency decimals: use currencyDecimals / cardDecimals from @hb/platform/currency-decimals (packages/platform/src/currency-decimals.ts)",
    match: isDecimalsTable,
  },
];

const GENERATED = [/\/gen\//, /\.gen\.ts$/];
/**
 * Tests may spell a rule out to check it; the rules are about the code that runs. The SDK and the
 * CLI are published on their own and cannot import the platform's homes.
 */
const isChecked = (file: string) =>
  !file.startsWith("packages/sdk/") &&
  !file.startsWith("packages/cli/") &&
  file.endsWith(".ts") &&
  !file.endsWith(".d.ts") &&
  !file.endsWith(".test.ts") &&
  !file.startsWith("test/") &&
  !GENERATED.some((g) => g.test(file));

export function checkSource(file: string, text: string): Finding[] {
  const rules = RULES.filter((r) => !r.home.includes(file) && (r.applies?.(file) ?? true));
  if (!rules.length) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const findings: Finding[] = [];
  const visit = (node: ts.Node) => {
    for (const rule of rules) {
      if (rule.match(node, source)) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        findings.push({ file, line: line + 1, rule: rule.name, message: rule.message });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

export function checkFiles(root: string, files: string[]): Finding[] {
  return files.filter(isChecked).flatMap((f) => checkSource(f, readFileSync(path.join(root, f), "utf8")));
}

if (import.meta.main) {
  const root = path.resolve(import.meta.dirname, "..");
  const args = process.argv.slice(2);
  const files = args.length
    ? args.map((f) => path.relative(root, path.resolve(f)))
    : execFileSync("git", ["ls-files", "-co", "--exclude-standard", "*.ts"], { cwd: root, encoding: "utf8" })
        .split("\n")
        .filter(Boolean);
  const findings = checkFiles(root, files);
  for (const f of findings) process.stderr.write(`${f.file}:${f.line} [${f.rule}] ${f.message}\n`);
  if (findings.length) {
    process.stderr.write(`${findings.length} copies of a rule outside its home\n`);
    process.exit(1);
  }
}
