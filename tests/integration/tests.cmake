pfc_script_test(integration.config_errors config_errors.sh LABELS integration)
pfc_script_test(integration.inference_precision inference_precision.sh LABELS integration
                TIMEOUT 120)
pfc_script_test(integration.data_pack data_pack.sh LABELS integration TIMEOUT 120)
pfc_script_test(integration.report_command report_command.sh LABELS integration TIMEOUT 120)
pfc_script_test(integration.report_plot report_plot.sh LABELS integration TIMEOUT 120)
pfc_script_test(integration.modules_load modules_load.sh LABELS integration TIMEOUT 120)
pfc_script_test(integration.slurm_row slurm_row.sh LABELS integration TIMEOUT 600)
pfc_script_test(integration.slurm_train slurm_train.sh LABELS "integration;mpi" TIMEOUT 600)
# One private Slurm cluster at a time: two would compete for the two cores their jobs ask for.
set_tests_properties(integration.slurm_row integration.slurm_train PROPERTIES
                     RESOURCE_LOCK local_slurm)
pfc_script_test(integration.golden_backbone golden_backbone.sh LABELS integration TIMEOUT 300)
pfc_script_test(integration.golden_vit golden_vit.sh LABELS "integration;mpi" TIMEOUT 300)
pfc_script_test(integration.plan_vit_configs plan_vit_configs.sh LABELS integration TIMEOUT 300)
pfc_script_test(integration.golden_partial_fc_mpi golden_partial_fc_mpi.sh LABELS "integration;mpi" TIMEOUT 600)
pfc_script_test(integration.golden_partial_fc_mpi_all_ranks golden_partial_fc_mpi.sh
                LABELS "integration;mpi;slow" TIMEOUT 1200 ARGS all)
pfc_script_test(integration.golden_parity golden_parity.sh LABELS "integration;mpi" TIMEOUT 600)
pfc_script_test(integration.golden_parity_all_ranks golden_parity.sh LABELS "integration;mpi;slow"
                TIMEOUT 1800 ARGS all)
pfc_script_test(integration.golden_semantics golden_semantics.sh LABELS "integration;mpi"
                TIMEOUT 1200)
pfc_script_test(integration.golden_schedule golden_schedule.sh LABELS "integration;mpi"
                TIMEOUT 1200)
pfc_script_test(integration.golden_schedule_all_ranks golden_schedule.sh
                LABELS "integration;mpi;slow" TIMEOUT 1800 ARGS all)
pfc_script_test(integration.golden_semantics_all_ranks golden_semantics.sh
                LABELS "integration;mpi;slow" TIMEOUT 3600 ARGS all)
pfc_script_test(integration.train_smoke train_smoke.sh LABELS "integration;mpi" TIMEOUT 300)
pfc_script_test(integration.train_schedule train_schedule.sh LABELS "integration;mpi"
                TIMEOUT 300)
pfc_script_test(integration.train_resume train_resume.sh LABELS "integration;mpi" TIMEOUT 600)
pfc_script_test(integration.train_resume_mbf train_resume_mbf.sh LABELS "integration;mpi"
                TIMEOUT 300)
pfc_script_test(integration.train_resume_vit train_resume_vit.sh LABELS "integration;mpi"
                TIMEOUT 300)
pfc_script_test(integration.train_resume_adamw train_resume_adamw.sh LABELS "integration;mpi"
                TIMEOUT 300)
pfc_script_test(integration.train_resume_storage train_resume_storage.sh LABELS "integration;mpi"
                TIMEOUT 300)
pfc_script_test(integration.train_emulated train_emulated.sh LABELS "integration;mpi" TIMEOUT 300)
pfc_script_test(integration.train_dataset train_dataset.sh LABELS "integration;mpi" TIMEOUT 300)
pfc_script_test(integration.verification verification.sh LABELS "integration;mpi" TIMEOUT 300)
pfc_script_test(integration.learning_verification learning_verification.sh
                LABELS "integration;mpi" TIMEOUT 900)
# The 16-bit class centres for as long as the f32 run (CI compares them at half its length).
# A small Vision Transformer through the same checks (no 16-bit storage runs).
pfc_script_test(integration.learning_verification_vit learning_verification.sh
                LABELS "integration;mpi" TIMEOUT 900 ARGS 0 vit)
pfc_script_test(integration.learning_verification_storage_200 learning_verification.sh
                LABELS "integration;mpi;slow" TIMEOUT 1200 ARGS 200)
pfc_script_test(integration.device_script device_script.sh LABELS integration TIMEOUT 180)
pfc_script_test(integration.mpi_singleton mpi_singleton.sh LABELS integration TIMEOUT 120)
pfc_script_test(integration.cuda_architectures cuda_architectures.sh LABELS integration TIMEOUT 120)
pfc_script_test(integration.cuda_configure cuda_configure.sh LABELS integration TIMEOUT 120)
pfc_script_test(integration.plan_command plan_command.sh LABELS "integration;mpi" TIMEOUT 300)
pfc_script_test(integration.plan_host_memory plan_host_memory.sh LABELS integration TIMEOUT 400)
# Nothing lost, nothing silently wrong: refusals, damage, divergence, full disks, hung ranks.
foreach(name output_guard resume_mismatch checkpoint_damage dataset_integrity
        file_system_failures checkpoint_room collective_timeout stop_signals kill_resume)
  pfc_script_test(integration.${name} ${name}.sh LABELS "integration;mpi" TIMEOUT 600)
endforeach()
# Nothing that is not pfc's own is replaced, and what is wrong is said before the work.
foreach(name pack_outputs embed_outputs outcome_file report_links)
  pfc_script_test(integration.${name} ${name}.sh LABELS integration TIMEOUT 600)
endforeach()
# What the process is given (thread counts, path bytes, memory limits) is refused by name.
pfc_script_test(integration.process_limits process_limits.sh LABELS integration TIMEOUT 120)
foreach(name resume_changed_keys train_sbatch_outside_slurm)
  pfc_script_test(integration.${name} ${name}.sh LABELS "integration;mpi" TIMEOUT 600)
endforeach()
# The kill -9 property at full length: 33 trials.
pfc_script_test(integration.kill_resume_33 kill_resume.sh LABELS "integration;mpi;slow"
                TIMEOUT 1800)
set_tests_properties(integration.kill_resume_33 PROPERTIES ENVIRONMENT
                     "${PFC_TEST_ENV};PFC=${CMAKE_BINARY_DIR}/bin/pfc;PFC_KILL_TRIALS=33")
# A clean build has no timings from earlier runs, and ctest would start the longest tests
# last: their measured seconds (2 cores) make it start them first.
set_tests_properties(integration.learning_verification PROPERTIES COST 320)
set_tests_properties(integration.golden_partial_fc_mpi PROPERTIES COST 135)
set_tests_properties(integration.golden_parity PROPERTIES COST 95)
set_tests_properties(integration.golden_semantics PROPERTIES COST 150)
pfc_script_test(integration.import_run import_run.sh LABELS integration TIMEOUT 300)
pfc_script_test(integration.import_hostile import_hostile.sh LABELS integration TIMEOUT 300)
# arcface_torch's models as starting points: files PyTorch writes at test time (its one-off
# install into the build folder's `torch` venv is shared by every test that needs PyTorch).
pfc_script_test(integration.import_torch import_torch.sh LABELS integration TIMEOUT 900)
set_tests_properties(integration.import_torch PROPERTIES COST 300)
pfc_script_test(integration.ijb ijb.sh LABELS "integration;mpi" TIMEOUT 600)
