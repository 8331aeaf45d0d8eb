import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refuseCopiedCommand } from '../../../src/core/sim/commandLine';
import { shellWords } from '../../../src/protocol/validate';

// "Copy as CLI" in the what-if panel: the page composes the command, the host puts it on the
// clipboard, the user pastes it into a shell. The host checks it as the CLI would read it
// (the fleet flags by name), and that it replays this panel's trace and writes no file.

const TRACE = '/home/me/proj/session one.jsonl';
const words = (text: string): string[] => shellWords(text)!.slice(2);

describe('refuseCopiedCommand: the simulate command the page wants on the clipboard', () => {
  it("lets the panel's own commands through: one GPU, a fleet, a sweep over GPUs", () => {
    for (const text of [
      "agent-trace simulate '/home/me/proj/session one.jsonl' --session abc --replicas 16 --stagger-s 10 --tool-wait-scale 1 --gpu h200 --model qwen3-32b --policy vllm-lru --json",
      "agent-trace simulate '/home/me/proj/session one.jsonl' --replicas 16 --stagger-s 10 --gpu h200 --model qwen3-32b --policy vllm-lru --gpus 8 --router kv-aware --json",
      "agent-trace simulate '/home/me/proj/session one.jsonl' --replicas 64 --stagger-s 1 --gpu h100 --model qwen3-32b --policy vllm-lru --router round-robin --sweep gpus=1,2,4,8 --json",
    ]) {
      assert.equal(refuseCopiedCommand(words(text), TRACE), null, text);
    }
  });

  it('refuses absurd fleet values by name: GPUs, router, a sweep over GPUs', () => {
    const base = "agent-trace simulate '/home/me/proj/session one.jsonl' --gpu h200 --model qwen3-32b";
    assert.match(
      refuseCopiedCommand(words(`${base} --gpus 1000000`), TRACE) ?? '',
      /^--gpus needs a whole number from 1 to 1024, not "1000000"$/,
    );
    assert.match(
      refuseCopiedCommand(words(`${base} --gpus 0`), TRACE) ?? '',
      /^--gpus needs a whole number from 1 to 1024/,
    );
    assert.match(
      refuseCopiedCommand(words(`${base} --gpus 1e308`), TRACE) ?? '',
      /^--gpus needs a whole number from 1 to 1024/,
    );
    assert.match(refuseCopiedCommand(words(`${base} --router '<img src=x>'`), TRACE) ?? '', /^--router /);
    assert.match(
      refuseCopiedCommand(words(`${base} --sweep gpus=1,2,4096`), TRACE) ?? '',
      /^--sweep gpus values must each be at most 1024/,
    );
    assert.match(
      refuseCopiedCommand(words(`${base} --unknown-flag 1`), TRACE) ?? '',
      /^unknown option --unknown-flag$/,
    );
  });

  it('refuses a command on another file, reading a workload, or writing one', () => {
    assert.match(
      refuseCopiedCommand(words('agent-trace simulate /etc/passwd --json'), TRACE) ?? '',
      /another file than the trace this panel shows/,
    );
    assert.match(
      refuseCopiedCommand(
        words("agent-trace simulate '/home/me/proj/session one.jsonl' --emit-workload /home/me/.bashrc"),
        TRACE,
      ) ?? '',
      /^--emit-workload is not something the what-if panel writes$/,
    );
    assert.match(
      refuseCopiedCommand(words('agent-trace simulate --workload /tmp/w.json'), TRACE) ?? '',
      /^--workload is not something the what-if panel writes$/,
    );
  });
});
