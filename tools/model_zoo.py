"""The model zoo: real model code (Hugging Face transformers, torchvision) that cinn_like must
run whole, defined once for the CI coverage suite (tests/python/test_model_zoo.py, "small"
configs on CPU) and the GPU benchmark ("realistic" configs).

Each entry builds its model with random weights (no downloads) at a size, makes inputs from a
seeded generator and says what to compare (its outputs) and what to train (its loss):

    import model_zoo as zoo
    e = zoo.get("llama-sdpa")
    model = e.build("small")                    # random weights, dropout off
    inputs = e.inputs("small", train=False)     # dict of keyword arguments
    out = model(**inputs)
    zoo.outputs(out)                            # the tensors to compare
    e.loss(out, inputs)                         # a scalar to call backward on

Hugging Face models come with attn_implementation "eager" and "sdpa" (the name's suffix); every
dropout probability is zero so a training step is deterministic (set_train also puts dropout
modules in eval mode, for models whose rates are not config fields). Sizes: "small" is 2 layers
of small widths (a few seconds of compile); "realistic" is the published shape (GPT-2 small,
BERT-base, a Llama-3.2-1B-like and a Qwen2-0.5B-like shape cut to 4 layers, T5-small;
torchvision at 224x224) with batch 8 x sequence 512 for text, batch 32 for images.
"""
import dataclasses
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SIZES = ("small", "realistic")
VOCAB_SMALL = 1000


@dataclasses.dataclass(frozen=True)
class Entry:
    """One zoo model. build(size) -> nn.Module; inputs(size, train, seed) -> kwargs."""
    name: str
    family: str  # "transformers" or "torchvision"
    build: Callable[[str], nn.Module]
    inputs: Callable[..., dict]

    def loss(self, out, inputs):
        """The training loss: the model's own (labels given) or cross-entropy on the logits."""
        if self.family == "transformers":
            return out.loss
        return F.cross_entropy(out, inputs["_target"])


def outputs(out):
    """The tensors of a model's output to compare: logits (and the loss when there is one)."""
    if isinstance(out, torch.Tensor):
        return [out]
    result = [out.logits]
    if getattr(out, "loss", None) is not None:
        result.append(out.loss)
    return result


def call(model, inputs):
    """The model on its inputs (keys starting with '_' are the loss's, not the model's)."""
    return model(**{k: v for k, v in inputs.items() if not k.startswith("_")})


def set_train(model):
    """Training mode (batch statistics in batch norm) with every dropout module off."""
    model.train()
    for m in model.modules():
        if isinstance(m, nn.modules.dropout._DropoutNd):
            m.eval()
    return model


# Float attributes through which modules pass a dropout rate to a functional call (attention's
# rate to F.scaled_dot_product_attention, in some transformers versions) rather than a module.
_RATE_ATTRIBUTES = ("dropout", "dropout_prob", "attention_dropout", "attn_dropout", "attn_pdrop")


def set_dropout_rate(model, p):
    """Every dropout module's p, and the float rates modules keep for functional calls, set to
    `p` (the zoo builds its models with dropout 0; training benchmarks and tests set it)."""
    for m in model.modules():
        if isinstance(m, nn.modules.dropout._DropoutNd):
            m.p = p
        for name in _RATE_ATTRIBUTES:
            if isinstance(getattr(m, name, None), float):
                setattr(m, name, p)
    return model


def _check_size(size):
    if size not in SIZES:
        raise ValueError(f"size {size!r}: expected one of {SIZES}")


# ---- Hugging Face transformers
# (config class, model class, small config, realistic config, batch, sequence) per family.
_NO_DROPOUT = {
    "gpt2": dict(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0),
    "bert": dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0),
    "llama": dict(attention_dropout=0.0),
    "qwen2": dict(attention_dropout=0.0),
    "t5": dict(dropout_rate=0.0, decoder_start_token_id=0),
}
_SMALL_DECODER = dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                      num_key_value_heads=2, intermediate_size=128, vocab_size=VOCAB_SMALL,
                      max_position_embeddings=128)
_HF_SHAPES = {
    "gpt2": (dict(n_layer=2, n_embd=64, n_head=4, n_positions=128, vocab_size=VOCAB_SMALL,
                  bos_token_id=VOCAB_SMALL - 1, eos_token_id=VOCAB_SMALL - 1),
             dict(n_layer=12, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)),
    "bert": (dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                  intermediate_size=128, vocab_size=VOCAB_SMALL, max_position_embeddings=128),
             dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12,
                  intermediate_size=3072, vocab_size=30522)),
    # Grouped-query attention in both: fewer key/value heads than query heads.
    "llama": (_SMALL_DECODER,
              dict(num_hidden_layers=4, hidden_size=2048, num_attention_heads=32,
                   num_key_value_heads=8, intermediate_size=8192, vocab_size=32000,
                   max_position_embeddings=2048, rope_theta=500000.0)),
    "qwen2": (_SMALL_DECODER,
              dict(num_hidden_layers=4, hidden_size=896, num_attention_heads=14,
                   num_key_value_heads=2, intermediate_size=4864, vocab_size=32000,
                   max_position_embeddings=2048)),
    "t5": (dict(num_layers=2, d_model=64, d_kv=16, num_heads=4, d_ff=128,
                vocab_size=VOCAB_SMALL),
           dict(num_layers=6, d_model=512, d_kv=64, num_heads=8, d_ff=2048, vocab_size=32128)),
}
# (batch, sequence[, decoder sequence]) per size.
_TEXT = {"small": (2, 16, 8), "realistic": (8, 512, 128)}


def _hf_classes(family):
    import transformers as tf  # noqa: PLC0415 (optional dependency)
    return {"gpt2": (tf.GPT2Config, tf.GPT2LMHeadModel),
            "bert": (tf.BertConfig, tf.BertForMaskedLM),
            "llama": (tf.LlamaConfig, tf.LlamaForCausalLM),
            "qwen2": (tf.Qwen2Config, tf.Qwen2ForCausalLM),
            "t5": (tf.T5Config, tf.T5ForConditionalGeneration)}[family]


def _hf_build(family, attn):
    def build(size):
        _check_size(size)
        config_cls, model_cls = _hf_classes(family)
        shape = _HF_SHAPES[family][SIZES.index(size)]
        config = config_cls(**shape, **_NO_DROPOUT[family], use_cache=False)
        config._attn_implementation = attn
        return model_cls(config).eval()
    return build


def _hf_inputs(family):
    def inputs(size, train=False, seed=0):
        _check_size(size)
        g = torch.Generator().manual_seed(seed)
        batch, seq, dec = _TEXT[size]
        vocab = _HF_SHAPES[family][SIZES.index(size)]["vocab_size"]
        ids = torch.randint(0, vocab, (batch, seq), generator=g)
        d = {"input_ids": ids}
        if family in ("bert", "t5"):  # padding: the last quarter of the last sequence
            mask = torch.ones(batch, seq, dtype=torch.long)
            mask[-1, seq - seq // 4:] = 0
            d["attention_mask"] = mask
        if family == "t5":
            labels = torch.randint(0, vocab, (batch, dec), generator=g)
            if train:
                d["labels"] = labels  # the model shifts them into decoder_input_ids
            else:
                d["decoder_input_ids"] = labels
        elif train:
            labels = ids.clone()
            if "attention_mask" in d:
                labels[d["attention_mask"] == 0] = -100  # no loss on padding
            d["labels"] = labels
        return d
    return inputs


# ---- torchvision
# (batch, image side) per size, and the small side of the models that need another.
# resnet18's small input is 64 pixels: at 32 its last stage is 1x1, so each training batch
# norm there normalizes 2 values per channel, whose gradient is ill-conditioned (it peaks near
# 1 / sqrt(eps) where the two values nearly agree): the rounding of any float32 forward moves
# the conv1.weight gradient by about 1e-3 of its largest element (eager's own error vs float64,
# and torch.compile's inductor differs from eager by 2e-3), past the suite's tolerance.
_IMAGES = {"small": (2, 32), "realistic": (32, 224)}
_SMALL_SIDE = {"resnet18": 64}
CLASSES_SMALL = 10


def _resnet18(size):
    from torchvision.models import resnet  # noqa: PLC0415
    if size == "realistic":
        return resnet.resnet18()
    # One basic block per stage: the stem, identity and downsampling blocks.
    return resnet.ResNet(resnet.BasicBlock, [1, 1, 1, 1], num_classes=CLASSES_SMALL)


def _mobilenet_v3_small(size):
    from torchvision.models import mobilenetv3  # noqa: PLC0415
    if size == "realistic":
        return mobilenetv3.mobilenet_v3_small()
    setting, _ = mobilenetv3._mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.5)
    # The first four blocks: squeeze-excitation with ReLU, plain ReLU (one residual), and
    # hard-swish with squeeze-excitation on a 5x5 depthwise convolution.
    return mobilenetv3.MobileNetV3(setting[:4], last_channel=128, num_classes=CLASSES_SMALL)


def _efficientnet_b0(size):
    from torchvision.models import efficientnet  # noqa: PLC0415
    if size == "realistic":
        return efficientnet.efficientnet_b0()
    setting, last = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=0.5,
                                                    depth_mult=1.0)
    # The first two stages: an MBConv without expansion, then two with (one residual).
    return efficientnet.EfficientNet(setting[:2], dropout=0.2, stochastic_depth_prob=0.0,
                                     num_classes=CLASSES_SMALL, last_channel=last)


def _convnext_tiny(size):
    from torchvision.models import convnext  # noqa: PLC0415
    if size == "realistic":
        return convnext.convnext_tiny()
    blocks = [convnext.CNBlockConfig(32, 64, 1), convnext.CNBlockConfig(64, None, 1)]
    return convnext.ConvNeXt(blocks, stochastic_depth_prob=0.0, num_classes=CLASSES_SMALL)


def _vit_b_16(size):
    from torchvision.models import vision_transformer as vit  # noqa: PLC0415
    if size == "realistic":
        model = vit.vit_b_16()
    else:
        model = vit.VisionTransformer(image_size=32, patch_size=16, num_layers=2, num_heads=4,
                                      hidden_dim=64, mlp_dim=128, num_classes=CLASSES_SMALL)
    # torchvision starts the classifier at zero (logits all zero), which would make the
    # comparison of outputs vacuous: random weights, as for every other layer.
    nn.init.normal_(model.heads.head.weight, std=0.02)
    return model


def _tv_build(make):
    def build(size):
        _check_size(size)
        return make(size).eval()
    return build


def _tv_inputs(name):
    def inputs(size, train=False, seed=0):
        _check_size(size)
        g = torch.Generator().manual_seed(seed)
        batch, side = _IMAGES[size]
        if size == "small":
            side = _SMALL_SIDE.get(name, side)
        classes = CLASSES_SMALL if size == "small" else 1000
        d = {"x": torch.randn(batch, 3, side, side, generator=g)}
        if train:
            d["_target"] = torch.randint(0, classes, (batch,), generator=g)
        return d
    return inputs


def _entries():
    result = []
    for family in ("gpt2", "bert", "llama", "qwen2", "t5"):
        for attn in ("eager", "sdpa"):
            result.append(Entry(f"{family}-{attn}", "transformers", _hf_build(family, attn),
                                _hf_inputs(family)))
    for name, make in (("resnet18", _resnet18), ("mobilenet_v3_small", _mobilenet_v3_small),
                       ("efficientnet_b0", _efficientnet_b0), ("convnext_tiny", _convnext_tiny),
                       ("vit_b_16", _vit_b_16)):
        result.append(Entry(name, "torchvision", _tv_build(make), _tv_inputs(name)))
    return result


ENTRIES = _entries()


def names():
    return [e.name for e in ENTRIES]


def get(name):
    for e in ENTRIES:
        if e.name == name:
            return e
    raise KeyError(f"no zoo model {name!r}; the zoo has {', '.join(names())}")
