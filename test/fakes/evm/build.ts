import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import solc from 'solc';

// Compiles the test chain's contracts with solc-js (bundled compiler, no download) into artifacts.json, which
// the tests load so that no test pays the ~1 s compile. Re-run after editing a .sol file:
//   npx tsx test/fakes/evm/build.ts

const DIR = import.meta.dirname;
const SOURCES = [
  'MockUSDC.sol',
  'MiniMulticall3.sol',
  'MiniPermit2.sol',
  'MiniUptoProxy.sol',
  'MiniBatchSettlement.sol',
];

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts: Record<
    string,
    Record<string, { abi: unknown[]; evm: { deployedBytecode: { object: string } } }>
  >;
}

const input = {
  language: 'Solidity',
  sources: Object.fromEntries(SOURCES.map((f) => [f, { content: readFileSync(join(DIR, f), 'utf8') }])),
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'cancun',
    outputSelection: { '*': { '*': ['abi', 'evm.deployedBytecode.object'] } },
  },
};

const out = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
if (errors.length > 0) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}

const artifacts: Record<string, { abi: unknown[]; runtime: string }> = {};
for (const file of SOURCES) {
  for (const [name, c] of Object.entries(out.contracts[file] ?? {})) {
    artifacts[name] = { abi: c.abi, runtime: `0x${c.evm.deployedBytecode.object}` };
  }
}
writeFileSync(
  join(DIR, 'artifacts.json'),
  `${JSON.stringify({ compiler: `solc-js ${solc.version()}`, contracts: artifacts }, null, 2)}\n`,
);
console.log(`wrote artifacts.json (${Object.keys(artifacts).join(', ')})`);
