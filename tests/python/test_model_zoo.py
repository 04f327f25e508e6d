"""The model zoo (tools/model_zoo.py: Hugging Face GPT-2, BERT, Llama, Qwen2, T5 with eager and
sdpa attention; torchvision resnet18, mobilenet_v3_small, efficientnet_b0, convnext_tiny,
vit_b_16) through torch.compile(backend="cinn_like") on CPU at the small configs, whole: one
forward in eval mode and one training step (loss and backward) per model.

Each test asserts that the outputs (for training also the loss and every parameter's gradient)
are within the stated tolerances of eager's, and no further from a float64 run of the same model
than FLOAT64_FACTOR times eager's own float32 error; and that every op the backend was handed ran
in cinn_like, except the entries of zoo_allowlist.json (model, mode, op, reason). A graph break
is not a fallback: only the ops of the graphs handed to the backend count. The suite ends with a
coverage table: model, mode, ops compiled, fell back, partitions, compile seconds (the first
call: PyTorch's tracing, cinn_like's partitioning and compiling, and running), the seconds of
those in cinn_like's graph compiler (stats()["compile_seconds"]), worst error.

Run one model or mode:
    python3 -m unittest test_model_zoo -k gpt2_sdpa_train
    CINN_LIKE_ZOO=gpt2-eager,resnet18 CINN_LIKE_ZOO_MODES=eval python3 -m unittest test_model_zoo
    CINN_LIKE_ZOO=all python3 -m unittest test_model_zoo   # the whole zoo (the default)
CINN_LIKE_ZOO_SEED fixes the random weights and inputs (otherwise fresh, printed on failure).
"""
import copy
import importlib.util
import json
import os
import random
import sys
import time
import unittest

from torch_util import HAVE_TORCH, needs_torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
ALLOWLIST = os.path.join(os.path.dirname(__file__), "zoo_allowlist.json")
MODES = ("eval", "train")
# Tolerances against eager float32 (atol relative to the tensor's largest magnitude; for
# gradients, the model's largest gradient), and how much further than eager's float32 result
# the compiled one may be from float64's.
RTOL, ATOL = 1e-4, 1e-4
GRAD_RTOL, GRAD_ATOL = 1e-3, 1e-4
FLOAT64_FACTOR = 10.0
GRAD_NORM_RTOL = 2e-2  # a gradient's L2 distance to eager where rounding re-routes a max-pool
HAVE_LIBS = all(importlib.util.find_spec(m) is not None for m in ("transformers", "torchvision"))

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    import model_zoo as zoo

ROWS = []  # the coverage table


# What runs when CINN_LIKE_ZOO is not set (the README's test command, CI): the whole zoo,
# forward and training (about 100 s on 2 cores).
DEFAULT_ZOO = "all"


def _selected():
    names = os.environ.get("CINN_LIKE_ZOO", DEFAULT_ZOO)
    modes = os.environ.get("CINN_LIKE_ZOO_MODES")
    return (None if names == "all" else names.split(",")), (modes.split(",") if modes else MODES)


def load_allowlist():
    with open(ALLOWLIST) as f:
        return json.load(f)["entries"]


def allowed(entries, model, mode, op):
    return any(e["model"] in ("*", model) and e["mode"] in ("*", mode) and e["op"] == op
               for e in entries)


def _to64(inputs):
    return {k: v.double() if v.is_floating_point() else v for k, v in inputs.items()}


def _scale(t):
    return max(float(t.detach().abs().max()), 1e-30) if t.numel() else 1.0


def _close(test, what, got, want, want64, rtol, atol, scale=None, norm_rtol=None):
    """got vs eager within rtol/atol (atol relative to `scale`, by default eager's largest
    magnitude), and got vs float64 within FLOAT64_FACTOR times eager's float32 error (plus the
    same atol); returns the error vs eager relative to the scale. Where eager's own float32
    error vs float64 passes that atol (an ill-conditioned gradient: resnet18's last batch norms
    see few values per channel), got may differ from eager by (FLOAT64_FACTOR + 1) times it:
    the float64 check is then the one that holds cinn_like to eager's accuracy. With
    `norm_rtol` (gradients), a tensor whose elements miss those bounds passes when its relative
    L2 distance to eager (or to float64, for the float64 check) is at most norm_rtol: a max-pool
    window whose two largest values rounding orders differently routes its gradient to another
    element (resnet18's conv1.weight moves by ~5e-3 in L2, every other gradient by ~1e-5; a
    wrong gradient is off by order one)."""
    got, want = got.detach().float(), want.detach().float()
    scale = scale or _scale(want)
    eager = None
    if want64 is not None:
        ref = want64.detach().double()
        eager = float((want.double() - ref).abs().max())
    bound = max(atol * scale, (FLOAT64_FACTOR + 1) * eager if eager is not None else 0.0)
    if norm_rtol is not None and not torch.allclose(got, want, rtol=rtol, atol=bound):
        distance = float((got - want).norm() / want.norm().clamp_min(1e-30))
        test.assertLessEqual(distance, norm_rtol,
                             f"{what}: relative L2 distance to eager {distance:.3g} (elements "
                             f"past rtol {rtol} / atol {bound:.3g})")
        return float((got - want).abs().max()) / scale
    torch.testing.assert_close(got, want, rtol=rtol, atol=bound,
                               msg=lambda m: f"{what}: {m}")
    if want64 is not None:
        mine = float((got.double() - ref).abs().max())
        if norm_rtol is not None and mine > FLOAT64_FACTOR * eager + atol * scale:
            distance = float((got.double() - ref).norm() / ref.norm().clamp_min(1e-30))
            test.assertLessEqual(distance, norm_rtol,
                                 f"{what}: relative L2 distance to float64 {distance:.3g}")
        else:
            test.assertLessEqual(mine, FLOAT64_FACTOR * eager + atol * scale,
                                 f"{what}: error vs float64 {mine:.3g}, eager float32's "
                                 f"{eager:.3g}")
    return float((got - want).abs().max()) / scale


@needs_torch
@unittest.skipUnless(HAVE_LIBS, "transformers and torchvision are not importable: install them "
                     "(scripts/setup.sh) to run the model zoo")
class ModelZooTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.allow = load_allowlist()
        seed = os.environ.get("CINN_LIKE_ZOO_SEED")
        cls.seed = int(seed) if seed else random.randrange(1 << 30)

    def run_model(self, name, mode):
        entry = zoo.get(name)
        note = f"[{name} {mode}, CINN_LIKE_ZOO_SEED={self.seed}]"
        torch.manual_seed(self.seed)
        train = mode == "train"
        model = entry.build("small")
        inputs = entry.inputs("small", train=train, seed=self.seed)
        mine = copy.deepcopy(model)
        ref64 = copy.deepcopy(model).double()
        if train:
            for m in (model, mine, ref64):
                zoo.set_train(m)
        torch._dynamo.reset()
        ct.reset()
        compiled = torch.compile(mine, backend="cinn_like", dynamic=False)
        results = []
        for net, ins in ((model, inputs), (compiled, inputs), (ref64, _to64(inputs))):
            start = time.perf_counter()
            with torch.set_grad_enabled(train):
                out = zoo.call(net, ins)
                loss = entry.loss(out, ins) if train else None
                if train:
                    loss.backward()
            results.append((zoo.outputs(out), loss, time.perf_counter() - start))
            if net is compiled:
                stats, fallbacks = ct.stats(), ct.fallback_report()
        (want, loss_e, _), (got, loss_c, seconds), (want64, loss64, _) = results
        refused = [(op, why) for op, why in fallbacks if not allowed(self.allow, name, mode, op)]
        row = [name, mode, stats["ops_compiled"], stats["ops_fallback"],
               len(fallbacks) - len(refused), stats["partitions"], seconds,
               stats["compile_seconds"], float("nan")]
        ROWS.append(row)
        worst = 0.0
        for k, (g, w, w64) in enumerate(zip(got, want, want64)):
            worst = max(worst, _close(self, f"{note} output {k}", g, w, w64, RTOL, ATOL))
        if train:
            worst = max(worst, _close(self, f"{note} loss", loss_c, loss_e, loss64, RTOL, ATOL))
            # Gradients that are zero in exact arithmetic (a key bias under softmax) are
            # rounding noise: their tolerance is relative to the model's largest gradient.
            grad_scale = max(_scale(p.grad) for p in model.parameters() if p.grad is not None)
            params = zip(model.named_parameters(), mine.parameters(), ref64.parameters())
            for (pname, pe), pc, p64 in params:
                if pe.grad is None:
                    self.assertIsNone(pc.grad, f"{note} {pname}: a gradient eager has not")
                    continue
                self.assertIsNotNone(pc.grad, f"{note} {pname}: no gradient")
                worst = max(worst, _close(self, f"{note} grad {pname}", pc.grad, pe.grad,
                                          p64.grad, GRAD_RTOL, GRAD_ATOL, grad_scale,
                                          norm_rtol=GRAD_NORM_RTOL))
        row[-1] = worst
        self.assertFalse(refused, f"{note} ops fell back that zoo_allowlist.json does not list:\n"
                         + "\n".join(f"  {op}: {why[:300]}" for op, why in refused))
        self.assertGreater(stats["ops_compiled"], 0, note)

    def run_with_dropout(self, name):
        """A training step with the model's dropout on: it compiles whole (dropout included: no
        fallback beyond the allow-list, as many partitions as with dropout off, so dropout
        splits no graph), draws masks (the loss differs from dropout off's), and two runs from
        one torch.manual_seed give the same loss and gradients bit for bit. Eager draws other
        masks, so the gradients' match with eager is the dropout-off test's."""
        entry = zoo.get(name)
        note = f"[{name} train with dropout, CINN_LIKE_ZOO_SEED={self.seed}]"

        def step(dropout):
            torch.manual_seed(self.seed)
            model = entry.build("small")
            inputs = entry.inputs("small", train=True, seed=self.seed)
            if dropout:
                zoo.set_dropout_rate(model, 0.1).train()  # HF's default rates
            else:
                zoo.set_train(model)
            torch._dynamo.reset()
            ct.reset()
            compiled = torch.compile(model, backend="cinn_like", dynamic=False)
            torch.manual_seed(self.seed + 1)  # the masks' draws
            loss = entry.loss(zoo.call(compiled, inputs), inputs)
            loss.backward()
            grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
            return loss.detach(), grads, ct.stats()["partitions"], ct.fallback_report()

        first, again, off = step(True), step(True), step(False)
        refused = [(op, why) for op, why in first[3]
                   if not allowed(self.allow, name, "train", op)]
        self.assertFalse(refused, f"{note} ops fell back:\n"
                         + "\n".join(f"  {op}: {why[:300]}" for op, why in refused))
        self.assertEqual(first[2], off[2], f"{note} partitions with dropout and without")
        self.assertTrue(torch.isfinite(first[0]), note)
        self.assertNotEqual(first[0].item(), off[0].item(), f"{note} no mask was drawn")
        self.assertEqual(first[0].item(), again[0].item(), f"{note} the loss of a second run")
        self.assertEqual(len(first[1]), len(again[1]), note)
        for k, (g1, g2) in enumerate(zip(first[1], again[1])):
            self.assertTrue(torch.equal(g1, g2), f"{note} gradient {k} of a second run")

    def test_allowlist_entries_give_a_reason(self):
        for e in load_allowlist():
            self.assertTrue(str(e.get("reason", "")).strip(), f"allow-list entry {e} has no reason")
            self.assertIn(e.get("mode"), ("*",) + MODES, f"allow-list entry {e}: mode")
            self.assertTrue(e.get("model") == "*" or e.get("model") in zoo.names(),
                            f"allow-list entry {e}: no such zoo model")


def _add_tests():
    names, modes = _selected()
    for name in (names or (zoo.names() if HAVE_TORCH else [])):
        for mode in modes:
            def test(self, name=name, mode=mode):
                self.run_model(name, mode)
            test.__name__ = f"test_{name.replace('-', '_')}_{mode}"
            test.__doc__ = f"{name} ({mode}) through cinn_like matches eager"
            setattr(ModelZooTest, test.__name__, test)


_add_tests()

# Models trained with dropout on (the zoo builds them with it off): attention and residual
# dropout at HF's default rate of 0.1.
DROPOUT_ZOO = ("gpt2-sdpa", "bert-eager")


def _add_dropout_tests():
    names, modes = _selected()
    if "train" not in modes:
        return
    for name in DROPOUT_ZOO:
        if names and name not in names:
            continue

        def test(self, name=name):
            self.run_with_dropout(name)
        test.__name__ = f"test_{name.replace('-', '_')}_train_with_dropout"
        test.__doc__ = f"{name} trains with dropout compiled whole and reproducibly"
        setattr(ModelZooTest, test.__name__, test)


_add_dropout_tests()


def tearDownModule():
    if not ROWS:
        return
    lines = ["model zoo coverage (CPU, small configs)",
             f"{'model':<20}{'mode':<7}{'ops compiled':>13}{'fell back':>10}{'allowed':>8}"
             f"{'partitions':>11}{'compile s':>10}{'cinn_like s':>12}{'max rel err':>12}"]
    for name, mode, ok, fell, allow, parts, secs, ours, err in ROWS:
        lines.append(f"{name:<20}{mode:<7}{ok:>13}{fell:>10}{allow:>8}{parts:>11}{secs:>10.1f}"
                     f"{ours:>12.1f}{err:>12.2e}")
    lines.append(f"total compile s {sum(r[6] for r in ROWS):.1f} (in cinn_like "
                 f"{sum(r[7] for r in ROWS):.1f})")
    table = "\n".join(lines) + "\n"
    print("\n" + table, flush=True)
    # CINN_LIKE_ZOO_TABLE (set by CMake): where scripts/test.sh finds the table to print.
    if os.environ.get("CINN_LIKE_ZOO_TABLE"):
        with open(os.environ["CINN_LIKE_ZOO_TABLE"], "w") as f:
            f.write(table)


if __name__ == "__main__":
    unittest.main()
