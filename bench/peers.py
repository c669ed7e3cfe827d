#!/usr/bin/python3
"""peers.py - the single-process libraries aiarun's users would otherwise
run, on the same rows as bench/answer.c (bench/peers.sh).

    peers.py data FMNIST_DIR M ROWS.f64 LABELS.f64
        the first M training rows of Fashion-MNIST, scaled to [0, 1], as
        raw doubles for bench/answer.c
    peers.py answer ROWS.f64 LABELS.f64 M REPS
        the medians, in seconds, of REPS gradients over the M rows:
        torch_softmax_s, torch_mlp_s (784-128-10, ReLU; float64, and
        float32 as *_f32_s) and numpy_pca_s (A.T @ (A @ V), V 784 x 10;
        numpy_pca_f32_s in float32)
    peers.py fit FMNIST_DIR
        seconds to reach the targets on the whole set: sklearn_softmax_s
        (LogisticRegression, lbfgs, to 83% test accuracy), torch_mlp_fit_s
        (784-128-10, SGD, to 87%), numpy_eigh_s (the top 10 of 784)
    peers.py race FMNIST_DIR PROCS DELAY_MS
        the mlp of fit to 87% test accuracy, the same recipe: one process
        (PROCS 1: torch_race_s, torch_race_steps), or PROCS processes of
        PyTorch's DistributedDataParallel over gloo, each 128 / PROCS rows
        of a step, the last one sleeping DELAY_MS before each backward (a
        straggler, as stragglers.fixed delays a worker's answers):
        torch_ddp_s, torch_ddp_steps
    peers.py pca FMNIST_DIR
        the top 10 principal components of the training rows (not
        centred, as aiarun's pca): numpy_eigh_s (A'A/m, then eigh: the
        exact figure, eigh_explained) and rsvd_s, randomized SVD with 10
        extra columns and the fewest power iterations (rsvd_iter) whose
        explained variance is within 1e-6 of eigh's (scikit-learn's
        randomized_svd, or NumPy's QR iteration where it is missing:
        rsvd_numpy=1); meansq, the rows' mean squared norm, turns a gap
        of the loss into one of explained variance (2 gap / meansq)

One thread each (set before the libraries load), as aiarun's workers
have.  A library that is not installed prints missing_LIB=1 instead."""
import os
import sys
import time

for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"

import gzip  # noqa: E402
import numpy as np  # noqa: E402


def idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    nd = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    a = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * nd)
    return a.reshape(dims[0], -1) if nd > 1 else a


def load(d, part):
    x = idx(os.path.join(d, part + "-images-idx3-ubyte.gz")) / 255.0
    y = idx(os.path.join(d, part + "-labels-idx1-ubyte.gz")).astype(np.int64)
    return x, y


def median(f, reps):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return sorted(t)[reps // 2]


def torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def answer(rows, labels, m, reps):
    m, reps = int(m), int(reps)
    A = np.fromfile(rows, dtype=np.float64, count=m * 784).reshape(m, 784)
    y = np.fromfile(labels, dtype=np.float64, count=m).astype(np.int64)
    V = np.random.default_rng(1).standard_normal((784, 10)) / 28
    print("numpy_pca_s=%.6g" % median(lambda: A.T @ (A @ V), reps))
    A32, V32 = A.astype(np.float32), V.astype(np.float32)
    print("numpy_pca_f32_s=%.6g" % median(lambda: A32.T @ (A32 @ V32), reps))
    torch = torch_or_none()
    if torch is None:
        print("missing_torch=1")
        return
    F = torch.nn.functional
    yt = torch.from_numpy(y)
    for dt, tag in ((torch.float64, ""), (torch.float32, "_f32")):
        At = torch.from_numpy(A).to(dt)
        W = torch.zeros(10, 784, dtype=dt, requires_grad=True)
        b = torch.zeros(10, dtype=dt, requires_grad=True)

        def softmax():
            W.grad = b.grad = None
            F.cross_entropy(At @ W.T + b, yt).backward()

        g = torch.Generator().manual_seed(1)
        W1 = (torch.randn(128, 784, generator=g, dtype=dt) / 28).requires_grad_()
        b1 = torch.zeros(128, dtype=dt, requires_grad=True)
        W2 = (torch.randn(10, 128, generator=g, dtype=dt) / 11).requires_grad_()
        b2 = torch.zeros(10, dtype=dt, requires_grad=True)

        def mlp():
            for p in (W1, b1, W2, b2):
                p.grad = None
            h = torch.relu(At @ W1.T + b1)
            F.cross_entropy(h @ W2.T + b2, yt).backward()

        print("torch_softmax%s_s=%.6g" % (tag, median(softmax, reps)))
        print("torch_mlp%s_s=%.6g" % (tag, median(mlp, reps)))


def fit(d):
    X, y = load(d, "train")
    Xt, yt = load(d, "t10k")
    t0 = time.perf_counter()
    w, v = np.linalg.eigh(X.T @ X / len(X))
    print("numpy_eigh_s=%.6g" % (time.perf_counter() - t0))
    print("numpy_eigh_explained=%.12f" % (w[-10:].sum() / w.sum()))
    try:
        from sklearn.linear_model import LogisticRegression
        from sklearn.exceptions import ConvergenceWarning
        import warnings
        warnings.simplefilter("ignore", ConvergenceWarning)
    except ImportError:
        print("missing_sklearn=1")
    else:
        # the fewest lbfgs iterations that reach 83%, timed as one fit
        for it in (5, 10, 15, 20, 30, 40, 60, 80, 100, 150, 200):
            t0 = time.perf_counter()
            c = LogisticRegression(max_iter=it).fit(X, y)
            s = time.perf_counter() - t0
            if c.score(Xt, yt) >= 0.83:
                print("sklearn_softmax_s=%.6g" % s)
                print("sklearn_softmax_iter=%d" % it)
                break
    torch = torch_or_none()
    if torch is None:
        print("missing_torch=1")
        return
    F = torch.nn.functional
    Xf = torch.from_numpy(X).float()
    Xtf = torch.from_numpy(Xt).float()
    yf = torch.from_numpy(y)
    ytf = torch.from_numpy(yt)
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    t0 = time.perf_counter()
    acc, epoch = 0, 0
    while acc < 0.87 and epoch < 20:
        perm = torch.randperm(len(Xf))
        for s in range(0, len(Xf), 128):
            i = perm[s:s + 128]
            opt.zero_grad()
            F.cross_entropy(net(Xf[i]), yf[i]).backward()
            opt.step()
            if s % (128 * 50) == 0:
                with torch.no_grad():
                    acc = (net(Xtf).argmax(1) == ytf).float().mean().item()
                if acc >= 0.87:
                    break
        epoch += 1
    print("torch_mlp_fit_s=%.6g" % (time.perf_counter() - t0))
    print("torch_mlp_fit_acc=%.4f" % acc)


def race_worker(rank, procs, d, delay, port, out):
    """One process of the race: procs 1 is the plain single process."""
    torch = torch_or_none()
    F = torch.nn.functional
    X, y = load(d, "train")
    Xt, yt = load(d, "t10k")
    Xf, Xtf = torch.from_numpy(X).float(), torch.from_numpy(Xt).float()
    yf, ytf = torch.from_numpy(y), torch.from_numpy(yt)
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, 10))
    model = net
    if procs > 1:
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port,
                                rank=rank, world_size=procs)
        model = torch.nn.parallel.DistributedDataParallel(net)
        dist.barrier()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(1)  # every rank the same permutation
    flag = torch.zeros(1)
    t0 = time.perf_counter()
    acc, steps, done = 0.0, 0, False
    while not done and steps < 20000:
        perm = torch.randperm(len(Xf), generator=g)
        for s in range(0, len(Xf) - 127, 128):
            i = perm[s:s + 128][rank::procs]
            opt.zero_grad()
            loss = F.cross_entropy(model(Xf[i]), yf[i])
            if delay > 0 and rank == procs - 1:
                time.sleep(delay / 1000)
            loss.backward()
            opt.step()
            steps += 1
            if steps % 50 == 0:
                if rank == 0:
                    with torch.no_grad():
                        acc = (net(Xtf).argmax(1) == ytf).float().mean().item()
                    flag[0] = acc >= 0.87
                if procs > 1:
                    dist.broadcast(flag, 0)
                if flag[0] > 0:
                    done = True
                    break
    if rank == 0:
        tag = "race" if procs == 1 else "ddp"
        with open(out, "w") as f:
            f.write("torch_%s_s=%.6g\ntorch_%s_steps=%d\ntorch_%s_acc=%.4f\n"
                    % (tag, time.perf_counter() - t0, tag, steps, tag, acc))
    if procs > 1:
        dist.destroy_process_group()


def race(d, procs, delay):
    procs, delay = int(procs), float(delay)
    if torch_or_none() is None:
        print("missing_torch=1")
        return
    import tempfile
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as out:
        if procs == 1:
            race_worker(0, 1, d, delay, 0, out.name)
        else:
            import torch.multiprocessing as mp
            port = 20000 + os.getpid() % 20000
            mp.spawn(race_worker, args=(procs, d, delay, port, out.name),
                     nprocs=procs)
        print(out.read(), end="")


def rsvd_numpy(X, k, q, it, seed):
    """Randomized SVD (Halko et al.): a Gaussian block of k + q columns,
    it power iterations with QR between them, the top k right singular
    vectors of the projected rows."""
    g = np.random.default_rng(seed)
    Q = np.linalg.qr(X @ g.standard_normal((X.shape[1], k + q)))[0]
    for _ in range(it):
        Q = np.linalg.qr(X.T @ Q)[0]
        Q = np.linalg.qr(X @ Q)[0]
    return np.linalg.svd(Q.T @ X, full_matrices=False)[2][:k].T


def pca(d):
    X, _ = load(d, "train")
    X = np.ascontiguousarray(X)
    k = 10
    total = (X * X).sum()
    t0 = time.perf_counter()
    w, v = np.linalg.eigh(X.T @ X / len(X))
    print("numpy_eigh_s=%.6g" % (time.perf_counter() - t0))
    exact = w[-k:].sum() / w.sum()
    print("eigh_explained=%.12f" % exact)
    print("meansq=%.12g" % (total / len(X)))
    try:
        from sklearn.utils.extmath import randomized_svd

        def run(it):
            return randomized_svd(X, k, n_oversamples=10, n_iter=it,
                                  random_state=0)[2].T
    except ImportError:
        print("rsvd_numpy=1")

        def run(it):
            return rsvd_numpy(X, k, 10, it, 0)
    for it in range(0, 41):
        t0 = time.perf_counter()
        V = run(it)
        s = time.perf_counter() - t0
        ev = ((X @ V) ** 2).sum() / total
        if exact - ev <= 1e-6:
            print("rsvd_s=%.6g" % s)
            print("rsvd_iter=%d" % it)
            print("rsvd_explained=%.12f" % ev)
            break


def data(d, m, rows, labels):
    x, y = load(d, "train")
    m = int(m)
    np.ascontiguousarray(x[:m], dtype=np.float64).tofile(rows)
    y[:m].astype(np.float64).tofile(labels)


if __name__ == "__main__":
    {"data": data, "answer": answer, "fit": fit,
     "race": race, "pca": pca}[sys.argv[1]](*sys.argv[2:])
