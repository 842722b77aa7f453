#include "app/golden_partial_fc.h"

#include "app/golden_backbone.h"
#include "pfc/partial_fc.h"

namespace pfc {

void check_golden_partial_fc(const GoldenFile& file, const GoldenNetwork& network,
                             const GoldenCase& golden_case, Backend& backend, Comm& comm,
                             DType dtype, DType gemm_operands, GoldenTable& table) {
  const std::string& group = network.group;
  const auto embeddings_ref = file.reference(group, golden_case.name, "embeddings");
  const auto grad_ref = file.reference(group, golden_case.name, "embeddings_grad");
  const auto weight_grad_ref = file.reference(group, golden_case.name, "pfc.weight");
  PFC_CHECK(embeddings_ref && grad_ref && weight_grad_ref,
            "{}/{} lacks embeddings, embeddings_grad or pfc.weight", group, golden_case.name);

  PartialFcOptions options;
  options.num_classes = network.num_classes;
  options.embedding_size = network.embedding_size;
  options.sample_rate = golden_case.sample_rate;
  options.margin = MarginParams{golden_case.m1, golden_case.m2, golden_case.m3, network.scale_s};
  options.method = golden_case.sample_rate < 1.0 ? PfcMethod::pfc : PfcMethod::mp;
  options.dtype = dtype;
  options.gemm_operands = gemm_operands;
  options.interclass_filtering_threshold = golden_case.interclass_filtering_threshold;
  options.margin_gradient = parse_margin_gradient(golden_case.margin_gradient);
  PartialFc head(backend, comm, options);
  head.set_global_weight(file.class_centres(network));
  const std::string sampled_path = group + "/" + golden_case.name + "/sampled_index";
  if (file.has(sampled_path)) {
    const Tensor index = h5::read_tensor(file.file_id(), sampled_path, DType::i64);
    head.inject_sampled_classes(std::vector<std::int64_t>(
        index.data<std::int64_t>(), index.data<std::int64_t>() + index.numel()));
  }

  // Every rank feeds the whole stored batch: the gathered batch then holds W copies of it,
  // which leaves the mean loss and the class-centre gradient unchanged and divides each
  // copy's embedding gradient by W. This checks the real gather path at any world size,
  // even one that does not divide the batch.
  // The exact embeddings in the classifier's type (rounded once to f32 in an f32 check).
  Tensor embeddings = backend.empty(embeddings_ref->values.shape(), dtype,
                                    MemoryPurpose::activations);
  backend.copy_cast(embeddings_ref->values, embeddings);
  Tensor embeddings_grad;
  const double loss = head.forward_backward(embeddings, file.labels(group), embeddings_grad, 0);
  backend.scale(embeddings_grad, static_cast<double>(comm.world_size()));

  const Tensor grad_host = to_host_f64(backend, embeddings_grad);
  const Tensor weight_grad = to_host_f64(backend, head.gather_global_weight_grad());

  table.compare_scalar("loss", loss, golden_case.loss, golden_case.torch_loss);
  compare_reference(table, "embeddings_grad", grad_host, *grad_ref);
  compare_reference(table, "pfc.weight grad", weight_grad, *weight_grad_ref);
}

}  // namespace pfc
