// Prints a text holding every code point assigned in Unicode 15.0, 15.1 and 16.0 (assigned in
// that version, unassigned in the one before), each in the contexts where a pre-tokenizer's
// character classes decide the split: inside a lower-case and an upper-case word, beside digits
// and punctuation, after one and two spaces, before and after an apostrophe and a contraction,
// at a line start and before a newline, and in runs with its neighbours.
//   node unicode_new_text.js ASSETS > text
'use strict';
const path = require('path');
const [assets] = process.argv.slice(2);
const unassigned = (v) => new Set(require(path.resolve(
    assets, 'node_modules', `@unicode/unicode-${v}`, 'General_Category/Unassigned/code-points.js')));

const versions = ['14.0.0', '15.0.0', '15.1.0', '16.0.0'];
const lines = [];
for (let i = 1; i < versions.length; ++i) {
  const before = unassigned(versions[i - 1]), now = unassigned(versions[i]);
  const added = [...before].filter((c) => !now.has(c)).sort((a, b) => a - b);
  for (let k = 0; k < added.length; ++k) {
    const c = String.fromCodePoint(added[k]);
    const run = added.slice(k, k + 3).map((x) => String.fromCodePoint(x)).join('');
    lines.push([`ab${c}cd`, `AB${c}CD`, `A${c}b`, `${c}Ab`, `x1${c}2`, `(${c}).`, ` ${c}`,
                `  ${c}x`, `'${c}`, `${c}'s`, `${c}'T`, `${c}\t`, run, `${run}${run} 7`,
                `${c}`].join(' '));
  }
}
process.stdout.write(lines.join('\n') + '\n');
