# Tests run under mpiexec at several world sizes (see pfc_mpi_test in ../CMakeLists.txt).
pfc_mpi_test(mpi_comm_test mpi/mpi_comm_test.cpp RANKS 1 2 3 4)
pfc_mpi_test(partial_fc_test mpi/partial_fc_test.cpp RANKS 1 2 3 4)
pfc_mpi_test(partial_fc_golden_test mpi/partial_fc_golden_test.cpp RANKS 1 2 3 4)
pfc_mpi_test(training_step_test mpi/training_step_test.cpp RANKS 1 2 3 4)
pfc_mpi_test(checkpoint_roundtrip_test mpi/checkpoint_roundtrip_test.cpp RANKS 1 2 3)
pfc_mpi_test(checkpoint_recovery_test mpi/checkpoint_recovery_test.cpp RANKS 1 2 3)
pfc_mpi_test(checkpoint_on_stop_test mpi/checkpoint_on_stop_test.cpp RANKS 1 2 3)
pfc_mpi_test(plan_memory_test mpi/plan_memory_test.cpp RANKS 1 2 3)
