#!/usr/bin/env bash
# arcface_torch's seven Vision Transformer configs (WebFace42M, AdamW) load as they stand and
# `pfc plan` gives each one's memory per GPU, as one rank of its stated GPU count on the H200:
# the 8-GPU vit_t and vit_b (batch 256 x 12 accumulated), the 64-GPU vit_t, vit_s, vit_b and
# vit_l, and vit_h (wf42m_pfc02_vit_h.py names no GPU count: 64, as arcface_torch trained it).
# vit_b, vit_l and vit_h recompute their blocks in the backward (using_checkpoint); the plan runs
# that code, so it counts what checkpointing holds: a small ViT with checkpointing, masking and
# DropPath planned for the CPU has, purpose by purpose, exactly the peaks its CPU run records.
set -uo pipefail
. "${PFC_SOURCE_DIR:?}/tests/integration/check_support.sh"
mkdir -p "$work/configs"
printf 'from easydict import EasyDict as edict\nconfig = edict()\n' >"$work/configs/base.py"
vit_config() {  # vit_config NAME NETWORK BATCH SAMPLE_RATE EPOCHS [LINE...]
  local name=$1 network=$2 batch=$3 rate=$4 epochs=$5
  shift 5
  {
    printf 'from easydict import EasyDict as edict\n\nconfig = edict()\n'
    printf 'config.margin_list = (1.0, 0.0, 0.4)\nconfig.network = "%s"\n' "$network"
    printf 'config.resume = False\nconfig.output = None\nconfig.embedding_size = 512\n'
    printf 'config.sample_rate = %s\nconfig.fp16 = True\nconfig.weight_decay = 0.1\n' "$rate"
    printf 'config.batch_size = %s\n' "$batch"
    printf '%s\n' "$@"
    printf 'config.optimizer = "adamw"\nconfig.lr = 0.001\nconfig.verbose = 2000\n'
    printf 'config.dali = False\n\nconfig.rec = "/train_tmp/WebFace42M"\n'
    printf 'config.num_classes = 2059906\nconfig.num_image = 42474557\n'
    printf 'config.num_epoch = %s\nconfig.warmup_epoch = config.num_epoch // 10\n' "$epochs"
    printf 'config.val_targets = []\n'
  } >"$work/configs/$name.py"
}
vit_config wf42m_pfc03_40epoch_8gpu_vit_t vit_t_dp005_mask0 512 0.3 40
vit_config wf42m_pfc03_40epoch_8gpu_vit_b vit_b_dp005_mask_005 256 0.3 40 \
  'config.gradient_acc = 12 # total batchsize is 256 * 12'
vit_config wf42m_pfc03_40epoch_64gpu_vit_t vit_t_dp005_mask0 384 0.3 40
vit_config wf42m_pfc03_40epoch_64gpu_vit_s vit_s_dp005_mask_0 384 0.3 40
vit_config wf42m_pfc03_40epoch_64gpu_vit_b vit_b_dp005_mask_005 384 0.3 40
vit_config wf42m_pfc03_40epoch_64gpu_vit_l vit_l_dp005_mask_005 384 0.3 40
vit_config wf42m_pfc02_vit_h vit_h 768 0.5 16 'config.dali_aug = True'

for spec in wf42m_pfc03_40epoch_8gpu_vit_t:8 wf42m_pfc03_40epoch_8gpu_vit_b:8 \
  wf42m_pfc03_40epoch_64gpu_vit_t:64 wf42m_pfc03_40epoch_64gpu_vit_s:64 \
  wf42m_pfc03_40epoch_64gpu_vit_b:64 wf42m_pfc03_40epoch_64gpu_vit_l:64 wf42m_pfc02_vit_h:64; do
  name=${spec%:*} gpus=${spec#*:}
  log="$work/$name.log"
  if ! "$PFC" plan "$work/configs/$name.py" --gpu h200 --set emulate_world_size="$gpus" \
    --set output=\""$work/plan_$name"\" >"$log" 2>&1; then
    fail "$name: pfc plan failed"
    tail -n 20 "$log"
    continue
  fi
  grep -q "planning cuda on NVIDIA H200 SXM 141GB; vit_" "$log" ||
    fail "$name: the plan does not name its network"
  echo "$name on $gpus GPUs:"
  grep -E "peak of all together|fits:" "$log"
done
peaks() {  # peaks METRICS_H5: the recorded peak bytes by purpose
  h5dump -d /memory/peak_bytes_by_purpose "$1" | sed -n '/DATA {/,/}/p' | grep "(0,0)"
}
small=(--set network=\"vit\" --set embed_dim=32 --set depth=2 --set num_heads=4
       --set image_size=36 --set mask_ratio=0.1 --set drop_path_rate=0.2
       --set using_checkpoint=true --set batch_size=4 --set steps=2)
if "$PFC" plan "${PFC_SOURCE_DIR}/input/smoke.toml" "${small[@]}" --set plan_for=\"cpu\" \
     --set output=\""$work/small_plan"\" >"$work/small_plan.log" 2>&1 &&
   "$PFC" train "${PFC_SOURCE_DIR}/input/smoke.toml" "${small[@]}" \
     --set output=\""$work/small_run"\" >"$work/small_run.log" 2>&1; then
  planned=$(peaks "$work/small_plan/plan/metrics.h5") run=$(peaks "$work/small_run/metrics.h5")
  [ -n "$run" ] && [ "$planned" = "$run" ] ||
    fail "small ViT: planned peaks '$planned', the CPU run's '$run'"
  echo "small ViT with checkpointing: plan and CPU run peak alike:$run"
else
  fail "small ViT: the plan or the run failed"
  tail -n 20 "$work/small_plan.log" "$work/small_run.log"
fi
[ "$failures" -eq 0 ]
