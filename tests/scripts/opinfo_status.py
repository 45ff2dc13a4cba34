"""Write tests/_opinfo_status.py from opinfo_report.py's status lines and print the share of
deterministic op_db entries that pass: `python tests/scripts/opinfo_status.py a.tsv [b.tsv
...]`. SKIP and NONDETERMINISTIC are decided here (missing ops; random sampling and
uninitialized memory), XFAIL is every (entry, dtype) or (entry, "errors") line that did not
pass, with its first error; TOLERANCE is kept from the current file."""
import os
import re
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, HERE)
import conftest  # noqa: E402,F401  (the harness's settings)
import test_opinfo as T  # noqa: E402

STATUS = os.path.join(HERE, "_opinfo_status.py")
RANDOM = re.compile(
    r"^(bernoulli|normal|uniform|cauchy|exponential|geometric|log_normal|multinomial|"
    r"rand_like|randn_like|randint_like|randint|randn|rand|randperm|poisson|"
    r"nn\.functional\.(dropout|dropout1d|dropout2d|dropout3d|alpha_dropout|"
    r"feature_alpha_dropout|rrelu|fractional_max_pool2d|fractional_max_pool3d|"
    r"multi_head_attention_forward)|"
    r"svd_lowrank|pca_lowrank|empty|empty_like|new_empty|empty_strided|new_empty_strided|"
    r"empty_permuted)(\.|$)")
RANDOM_WHY = ("random sampling: tested statistically and for generator reproducibility "
              "(test_random_ops.py, test_distributions.py, test_nn_*)")
WHY = {"nn.functional.multi_head_attention_forward":
       "its only sample with gradients trains with dropout 0.5 (random); its deterministic "
       "samples pass, and nn.MultiheadAttention is tested in test_nn_transformer.py"}


def _dump(name, d):
    out = [f"{name} = {{"]
    for k in sorted(d):
        v = d[k]
        if len(repr(v)) > 90:  # (the line-length limit: the reason's start is enough)
            v = v[:85] + "..."
        out += [f"    {k!r}:", f"        {v!r},"]
    return "\n".join(out + ["}"])


def main(paths):
    rows = {}
    for path in paths:
        for line in open(path):
            p = line.rstrip("\n").split("\t")
            if len(p) >= 3:
                rows[(p[0], p[1])] = (p[2], p[3] if len(p) > 3 else "")
    skip, nondet, xfail, unseen = {}, {}, {}, []
    passing = total = 0
    for eid, op in T.ENTRIES.items():
        if RANDOM.match(eid):
            if eid.startswith(("empty", "new_empty")):
                skip[eid] = ("uninitialized memory: values are arbitrary in torch (shape/dtype "
                             "tested in test_tensor.py)")
            else:
                nondet[eid] = WHY.get(eid, RANDOM_WHY)
            continue
        total += 1
        ours = T._ours(eid)
        if isinstance(ours, Exception):
            skip[eid] = re.sub(r" at 0x[0-9a-f]+", "", f"missing in eagergrad: {ours}")
            continue
        keys = [str(dt).split(".")[1] for dt in T._dtypes(op)]
        keys += ["errors"] if op.error_inputs_func is not None else []
        ok = True
        for d in keys:
            r = rows.get((eid, d))
            if r is None:
                unseen.append((eid, d))
                ok = False
                continue
            status, why = r
            if status in ("fail", "missing"):
                ok = False
                why = why.split(" @ ")[0].replace("eagergrad does not implement ",
                                                   "not implemented: ")
                why = re.sub(r"\s+", " ", why)[:140]
                key = f"{eid}/{d}"
                xfail[key] = ("error inputs: " if d == "errors" else "") + (
                    "not implemented: " if status == "missing" and "not implemented" not in why
                    else "") + why
        passing += ok
    text = open(STATUS).read()  # (its docstring and TOLERANCE are kept)
    header, tolerance = text[:text.index("SKIP = {")], text[text.index("TOLERANCE = {"):]
    with open(STATUS, "w") as f:
        f.write(header + "\n\n".join([_dump("SKIP", skip), _dump("NONDETERMINISTIC", nondet),
                                      _dump("XFAIL", xfail), tolerance]))
    print(f"{passing} of {total} deterministic entries pass every dtype and their error "
          f"inputs ({100 * passing / total:.1f}%); {len(skip)} skipped, {len(nondet)} "
          f"nondeterministic, {len(xfail)} xfails; {len(unseen)} (entry, dtype) not in the "
          f"report{': ' + str(unseen[:10]) if unseen else ''}")


if __name__ == "__main__":
    main(sys.argv[1:])
