"""One TRL GRPO step whose rewards come from `kernelsmith serve` — the RL plumbing end to end.

The policy is a tiny randomly initialized Llama built from a config, with a byte-level
tokenizer built here: nothing is downloaded. Its completions are gibberish, so almost every
reward is 0 (parse_error); to show non-zero rewards flow through the trainer too, the reward
function can mix in one known-good completion per batch (--inject-good).

    build/kernelsmith serve --backend triton --gpus all --port 8080 &
    python3 bench/serve/grpo_step.py --url http://127.0.0.1:8080 [--backend cpu] [--inject-good]

Needs torch, transformers, datasets, trl (not in python/requirements.txt). --dry-run builds
the model, tokenizer, dataset and trainer without calling the service or training.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))


def byte_tokenizer():
    """A byte-level tokenizer (256 byte tokens + specials) built locally."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>"]
    # ByteLevel maps each byte to a printable character; those 256 characters are the vocabulary.
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    for i, s in enumerate(specials):
        vocab[s] = len(alphabet) + i
    # BPE without merges: every byte-character is its own token.
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    fast.padding_side = "left"
    return fast


def tiny_model(vocab_size: int, pad_id: int, bos_id: int, eos_id: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=4096,
        pad_token_id=pad_id, bos_token_id=bos_id, eos_token_id=eos_id,
    )
    return LlamaForCausalLM(config)


def rl_rows(backend: str) -> list[dict]:
    """Rows in `kernelsmith export rl`'s layout (prompt, label) for examples/softmax."""
    problem = (REPO / "examples/softmax/problem.py").read_text()
    candidate = "triton_candidate.py" if backend == "triton" else "cpu_candidate.py"
    parent = (REPO / "examples/softmax" / candidate).read_text()
    truth = json.dumps({"problem_id": "softmax", "problem_path": "examples/softmax/problem.py",
                        "reference_code": problem, "parent_code": parent, "backend": backend})
    prompt = "Make this kernel faster. Reply with SEARCH/REPLACE diffs.\n" + parent[:200]
    return [{"prompt": prompt, "label": truth} for _ in range(4)]


def good_completion(backend: str) -> str:
    if backend == "triton":
        return ("```\n<<<<<<< SEARCH\nBLOCK_SIZE = 2048\n=======\nBLOCK_SIZE = 1024\n"
                ">>>>>>> REPLACE\n```")
    return ("```\n<<<<<<< SEARCH\n    def __init__(self):\n=======\n"
            "    def __init__(self) -> None:\n>>>>>>> REPLACE\n```")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--backend", default="triton", choices=["triton", "cuda", "cpu"])
    ap.add_argument("--inject-good", action="store_true",
                    help="replace one completion per batch by a known-good diff")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()

    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from kernelsmith.rewards import make_trl_reward

    torch.manual_seed(0)
    tokenizer = byte_tokenizer()
    model = tiny_model(len(tokenizer), tokenizer.pad_token_id, tokenizer.bos_token_id,
                       tokenizer.eos_token_id)
    dataset = Dataset.from_list(rl_rows(args.backend))
    service_reward = make_trl_reward(url=args.url)
    seen: list[list[float]] = []

    def kernelsmith_reward(completions, **kwargs):
        if args.inject_good:
            completions = [good_completion(args.backend)] + list(completions[1:])
        rewards = service_reward(completions, **kwargs)
        seen.append(rewards)
        return rewards

    config = GRPOConfig(
        output_dir=str(Path("/tmp") / "ks-grpo-step"), per_device_train_batch_size=4,
        num_generations=4, max_completion_length=32, max_steps=1, logging_steps=1,
        learning_rate=1e-4, report_to=[], save_strategy="no", bf16=False,
        use_cpu=not torch.cuda.is_available(),
    )
    if hasattr(config, "max_prompt_length"):
        config.max_prompt_length = 256
    trainer = GRPOTrainer(model=model, reward_funcs=[kernelsmith_reward], args=config,
                          train_dataset=dataset, processing_class=tokenizer)
    if args.dry_run:
        print(f"dry run: model {sum(p.numel() for p in model.parameters())} params, "
              f"vocab {len(tokenizer)}, {len(dataset)} rows, trainer {type(trainer).__name__}")
        return 0
    t0 = time.monotonic()
    result = trainer.train()
    wall = time.monotonic() - t0
    flat = [r for batch in seen for r in batch]
    print(json.dumps({"steps": result.global_step, "train_loss": result.training_loss,
                      "reward_calls": len(seen), "rewards": flat,
                      "nonzero_rewards": sum(1 for r in flat if r > 0), "wall_s": round(wall, 1)}))
    return 0 if seen and result.global_step == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
