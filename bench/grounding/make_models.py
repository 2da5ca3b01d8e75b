"""Two randomly initialised BERT sequence classifiers of real sizes, for
timing the grounding runtime (bench/grounding/run.sh):

- `DIR/minilm`: 6 layers, hidden 384, 12 heads, intermediate 1536 (the
  shape of all-MiniLM-L6-v2 and of the MiniLM-L6 cross-encoders);
- `DIR/base`: 12 layers, hidden 768, 12 heads, intermediate 3072 (the
  shape of BERT-base NLI cross-encoders).

Both read 3 labels (entailment, neutral, contradiction) and carry the real
WordPiece tokenizer.json of all-MiniLM-L6-v2 (vocabulary 30522, 512
positions, 2 token types), which scripts/fetch-models.sh downloads.

Random weights time the same as trained ones. They are drawn at a trained
network's scale (`roughen`) rather than BERT's initialiser, so that the
probabilities depend on the input and spread over (0, 1) instead of all
sitting near one value: the agreement check of reference.py then notices
a wrong mask or a wrong token, not only a wrong shape.

    python bench/grounding/make_models.py DIR [TOKENIZER_JSON]

Deterministic: the same packages write the same files.
"""

import os
import shutil
import sys
from pathlib import Path

import torch
from transformers import BertConfig, BertForSequenceClassification

SIZES = {
    "minilm": dict(num_hidden_layers=6, hidden_size=384, num_attention_heads=12, intermediate_size=1536),
    "base": dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12, intermediate_size=3072),
}

LABELS = ["entailment", "neutral", "contradiction"]


def default_tokenizer() -> Path:
    home = Path(os.environ.get("ASSAY_HOME", Path.home() / ".cache" / "assay"))
    return home / "models" / "all-minilm-l6-v2" / "tokenizer.json"


def roughen(model) -> None:
    """Weights of a trained network's scale rather than BERT's initialiser
    (std 0.02), whose outputs hardly depend on the input: every matrix
    std 1/sqrt(fan-in), embeddings std 1, biases std 0.1, layer norms
    near 1, the classifier twice as wide."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm" in name:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn_like(p))
            elif "embeddings" in name:
                p.normal_(0.0, 1.0)
            elif name.endswith("bias"):
                p.normal_(0.0, 0.1)
            else:
                scale = 2.0 if name.startswith("classifier") else 1.0
                p.normal_(0.0, scale / p.shape[1] ** 0.5)


def make(out: Path, name: str, tokenizer: Path, seed: int) -> None:
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=30522,
        max_position_embeddings=512,
        type_vocab_size=2,
        hidden_act="gelu",
        pad_token_id=0,
        id2label=dict(enumerate(LABELS)),
        label2id={label: i for i, label in enumerate(LABELS)},
        **SIZES[name],
    )
    model = BertForSequenceClassification(config).eval()
    roughen(model)
    target = out / name
    if target.exists():
        shutil.rmtree(target)
    model.save_pretrained(target, safe_serialization=True)
    shutil.copyfile(tokenizer, target / "tokenizer.json")
    print(f"{target}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters", file=sys.stderr)


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    tokenizer = Path(sys.argv[2]) if len(sys.argv) == 3 else default_tokenizer()
    if not tokenizer.is_file():
        sys.exit(f"no tokenizer at {tokenizer}: run scripts/fetch-models.sh")
    out.mkdir(parents=True, exist_ok=True)
    for seed, name in enumerate(SIZES):
        make(out, name, tokenizer, seed)


if __name__ == "__main__":
    main()
