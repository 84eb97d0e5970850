// Times the WASM build of the protocol parser on the benchmark inputs, in one
// call and in 20-character chunks. Usage: node bench.cjs <folder of inputs>
const fs = require('node:fs');
const path = require('node:path');
const { load, run } = require('./pkg/rivet_wasm_parser_bench.js');

const dir = process.argv[2];
const rounds = 30;
const sizes = {};
for (const name of ['response-1mb', 'response-4mb']) {
  const input = fs.readFileSync(path.join(dir, `${name}.txt`), 'utf8');
  const bytes = Buffer.byteLength(input, 'utf8');
  for (const [mode, chars] of [['one-call', 0], ['chunks-20', 20]]) {
    load(input, chars);
    for (const [api, collect] of [['push', true], ['push_with', false]]) {
      run(collect); // warm up
      let best = Infinity;
      for (let i = 0; i < rounds; i++) {
        const start = process.hrtime.bigint();
        run(collect);
        best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e9);
      }
      const key = `${api}/${mode}`;
      (sizes[key] ??= []).push(best);
      console.log(`wasm ${key} ${name}: ${(bytes / best / 1e6).toFixed(0)} MB/s (${(best * 1e3).toFixed(2)} ms)`);
    }
  }
}
for (const [key, [one, four]] of Object.entries(sizes)) {
  console.log(`wasm ${key}: 4 MB costs ${(four / one).toFixed(2)}x the 1 MB input`);
}
