import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_PARAMS } from '../../src/core/sim/params';
import type { FreeOrder } from '../../src/core/sim/params';
import { parseWorkloadJson } from '../../src/core/sim/workload';
import { findOracle } from './oracleRun';
import { stepDiff } from './stepDiff';

// node --import tsx test/oracle/runStepDiff.ts W.json --replicas N --stagger-s S --capacity-tokens C [--free-order current|legacy]
// W.json: a workload as `agent-trace simulate … --emit-workload W.json` writes it.
// Prints the first step where the reference engine and the vLLM oracle part, with the steps before it.

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    replicas: { type: 'string', default: '1' },
    'stagger-s': { type: 'string', default: '0' },
    'capacity-tokens': { type: 'string', default: String(DEFAULT_PARAMS.capacityTokens) },
    'free-order': { type: 'string', default: DEFAULT_PARAMS.freeOrder },
    'max-batched-tokens': { type: 'string', default: String(DEFAULT_PARAMS.maxNumBatchedTokens) },
    context: { type: 'string', default: '3' },
  },
});
const found = findOracle();
if ('missing' in found) {
  console.error(found.missing);
  process.exit(1);
}
const parsed = parseWorkloadJson(JSON.parse(readFileSync(positionals[0]!, 'utf8')));
const workload = parsed;
const params = {
  ...DEFAULT_PARAMS,
  capacityTokens: Number(values['capacity-tokens']),
  freeOrder: values['free-order'] as FreeOrder,
  maxNumBatchedTokens: Number(values['max-batched-tokens']),
};
const oracleDir = found.dir;

async function main(): Promise<void> {
  const result = await stepDiff(
    oracleDir,
    { workload, replicas: Number(values.replicas), staggerS: Number(values['stagger-s']), params },
    Number(values.context),
  );
  console.log(`steps: ours ${result.ourSteps}, oracle ${result.oracleSteps}`);
  if (!result.first) console.log('every step agrees');
  else {
    console.log(`first difference at step ${result.first.step}: ${result.first.what}`);
    for (const c of result.first.context) {
      console.log(`  ours   ${JSON.stringify(c.ours)}`);
      console.log(`  oracle ${JSON.stringify(c.oracle)}`);
    }
  }
}

void main();
