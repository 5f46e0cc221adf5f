#!/usr/bin/python3
"""ResNet-18 on opprof's model runtime against PyTorch 1.13 (Debian's
python3-torch), in one run, with the same thread count.

    /usr/bin/python3 bench/nn_vs_torch.py [--bin build/bin/bench_nn] [--threads N]
                                          [--rounds R] [--reps K]

Each round times K ResNet-18 forwards (batch 5 x 3 x 224 x 224, eval, no
grad) and K training steps (batch 8, SGD with momentum) in a PyTorch process,
then the same in bench_nn; rounds alternate so that load from other programs
on the machine falls on both alike. Prints the medians over all rounds and
the ratios the model-runtime issue sets targets for:
    forward, ours / PyTorch          <= 1.10
    training step, ours / PyTorch    <= 1.30
    profiled / unprofiled forward    <= 1.01  (<= 1.03 with shapes, memory, FLOPs)
Installs python3-torch and python3-torchvision (scripts/deps.sh bench) when
they are missing.
"""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TORCH_WORKER = r"""
import sys, time, torch, torchvision
threads, reps, batch, tbatch, size = map(int, sys.argv[1:6])
torch.set_num_threads(threads)
torch.manual_seed(0)
m = torchvision.models.resnet18()
x = torch.randn(batch, 3, size, size)
xt = torch.randn(tbatch, 3, size, size)
t = torch.tensor([(i * 7) % 1000 for i in range(tbatch)])
opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
def fwd():
    m.eval()
    with torch.no_grad():
        m(x)
def step():
    m.train()
    opt.zero_grad()
    torch.nn.functional.cross_entropy(m(xt), t).backward()
    opt.step()
for _ in range(2):
    fwd(); step()
def timed(f):
    t0 = time.perf_counter(); f(); return (time.perf_counter() - t0) * 1e3
fw = [timed(fwd) for _ in range(reps)]
st = [timed(step) for _ in range(reps)]
print("forward", *["%.3f" % v for v in fw])
print("train_step", *["%.3f" % v for v in st])
"""


def ensure_torch():
    """Debian's python3-torch is for Debian's python3: install it when
    missing, and move to /usr/bin/python3 when another interpreter runs us."""
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        return
    except ImportError:
        pass
    subprocess.run([os.path.join(ROOT, "scripts", "deps.sh"), "bench"], check=True)
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", os.path.abspath(__file__), *sys.argv[1:]])


def parse(out):
    rows = {}
    for line in out.splitlines():
        if line and not line.startswith("#"):
            name, *vals = line.split()
            rows[name] = [float(v) for v in vals]
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin", "bench_nn"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=5)
    ap.add_argument("--train-batch", type=int, default=8)
    ap.add_argument("--size", type=int, default=224)
    a = ap.parse_args()
    ensure_torch()
    shape = [str(v) for v in (a.threads, a.reps, a.batch, a.train_batch, a.size)]
    ours, torch_t, estimates = {}, {}, []
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    for r in range(a.rounds):
        pt = subprocess.run([sys.executable, "-c", TORCH_WORKER, *shape], env=env, check=True,
                            capture_output=True, text=True).stdout
        us = subprocess.run([a.bin, "--threads", str(a.threads), "--reps", str(a.reps), "--batch", str(a.batch),
                             "--train-batch", str(a.train_batch), "--size", str(a.size)], env=env, check=True,
                            capture_output=True, text=True).stdout
        for k, v in parse(pt).items():
            torch_t.setdefault(k, []).extend(v)
        for k, v in parse(us).items():
            ours.setdefault(k, []).extend(v)
        estimates = [l[2:] for l in us.splitlines() if l.startswith("# estimate")]
        print("round %d/%d done" % (r + 1, a.rounds), file=sys.stderr)
    med = statistics.median
    f_t, f_o = med(torch_t["forward"]), med(ours["forward"])
    s_t, s_o = med(torch_t["train_step"]), med(ours["train_step"])
    p1, p2 = med(ours["forward_profiled"]), med(ours["forward_full"])
    n = len(ours["forward"])
    print("ResNet-18, %d thread(s), %d rounds x %d reps (medians of %d; the machine may be shared)"
          % (a.threads, a.rounds, a.reps, n))
    print("  forward b%d %dx%d:  PyTorch %8.2f ms  opprof %8.2f ms  ratio %.3f  (target <= 1.10)"
          % (a.batch, a.size, a.size, f_t, f_o, f_o / f_t))
    print("  train step b%d:     PyTorch %8.2f ms  opprof %8.2f ms  ratio %.3f  (target <= 1.30)"
          % (a.train_batch, s_t, s_o, s_o / s_t))
    print("  profiled / unprofiled forward:               %.4f  (target <= 1.01)" % (p1 / f_o))
    print("  ... with shapes, memory and FLOPs:           %.4f  (target <= 1.03)" % (p2 / f_o))
    c0 = med(ours["cpu_forward"])
    print("  in process CPU time: profiled %.4f, with shapes, memory and FLOPs %.4f"
          % (med(ours["cpu_forward_profiled"]) / c0, med(ours["cpu_forward_full"]) / c0))
    for line in estimates:
        print("  " + line)
    print("  (min-based: forward %.3f, train %.3f, profiled %.4f, full %.4f)"
          % (min(ours["forward"]) / min(torch_t["forward"]), min(ours["train_step"]) / min(torch_t["train_step"]),
             min(ours["forward_profiled"]) / min(ours["forward"]), min(ours["forward_full"]) / min(ours["forward"])))


if __name__ == "__main__":
    main()
