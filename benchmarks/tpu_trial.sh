#!/bin/bash
# jitfix on the TPU: fix --validate, run --write and profile on corpus cases, JAX_PLATFORMS unset.
set -u
# Usage (from the repository root, with the wheels of docs/benchmarks.md in .whl-tpu):
#   benchmarks/tpu_trial.sh traced-if/jax_575_metropolis_energy_flip.py ...
REPO=$PWD
PIP_CONFIG_FILE=/dev/null python3 -m pip install --isolated -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-tpu/*.whl || exit 1
export PYTHONPATH=${PYTHONPATH:-}:/tmp/site:$REPO/src
unset JAX_PLATFORMS
export PYTHONUNBUFFERED=1
python3 -c "import jax, jitfix; print('jax', jax.__version__, jax.devices(), 'jitfix from', jitfix.__file__)"
env | grep -E '^(TPU_|LIBTPU_|PJRT_)' | sed 's/=.*/=.../' | sort
for case in "$@"; do
  name=$(basename "$case" .py)
  work=/tmp/trial/$name
  mkdir -p "$work/fix" "$work/run" "$work/profile"
  for mode in fix run profile; do cp "$REPO/benchmarks/reports/$case" "$work/$mode/case.py"; done
  echo "=== $case"
  cd "$work/fix" && SECONDS=0
  python3 -m jitfix fix --validate --no-cache --no-color case.py 2>&1 | tail -8
  echo "fix --validate: $SECONDS s; $(cmp -s "$REPO/benchmarks/reports/$case" case.py && echo unchanged || echo rewritten)"
  cd "$work/run" && SECONDS=0
  python3 -m jitfix run --write --no-color -- python3 -c 'import case; case.main()' 2>&1 | tail -12
  echo "run --write: $SECONDS s; $(cmp -s "$REPO/benchmarks/reports/$case" case.py && echo unchanged || echo rewritten)"
  cd "$work/profile" && SECONDS=0
  python3 -m jitfix profile --no-color -- python3 -c 'import case; case.main()' 2>&1 | head -8
  echo "profile: $SECONDS s"
  cd "$REPO"
done
echo "=== processes left behind:"
ps -u "$(id -u)" -o pid=,args= | grep -E 'jitfix|case' | grep -v -E 'grep|tpu_trial' || echo none
