// Times the WASM build of the protocol parser on the benchmark inputs, in one
// call and in 20-character chunks, through `push` and `push_with`. The 1 MB
// and 4 MB runs alternate, so both see the same machine load; each figure is
// the best of its rounds. Usage: node bench.cjs <folder of inputs>
const fs = require('node:fs');
const path = require('node:path');
const { load, run } = require('./pkg/rivet_wasm_parser_bench.js');

const dir = process.argv[2];
const rounds = 60;
const names = ['response-1mb', 'response-4mb'];
const inputs = names.map((name) => fs.readFileSync(path.join(dir, `${name}.txt`), 'utf8'));
const bytes = inputs.map((input) => Buffer.byteLength(input, 'utf8'));

function time(slot, collect) {
  const start = process.hrtime.bigint();
  run(slot, collect);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

for (const [mode, chars] of [['one-call', 0], ['chunks-20', 20]]) {
  inputs.forEach((input, slot) => load(slot, input, chars));
  for (const [api, collect] of [['push', true], ['push_with', false]]) {
    const best = inputs.map((_, slot) => (time(slot, collect), Infinity));
    for (let i = 0; i < rounds; i++) {
      for (let slot = 0; slot < inputs.length; slot++) {
        best[slot] = Math.min(best[slot], time(slot, collect));
      }
    }
    const figures = names.map((name, slot) => `${name} ${(bytes[slot] / best[slot] / 1e6).toFixed(0)} MB/s`);
    console.log(
      `wasm ${api}/${mode}: ${figures.join(', ')}; 4 MB costs ${(best[1] / best[0]).toFixed(2)}x the 1 MB input`,
    );
  }
}
