// client-node serialises a request body through its typed models: where a plain object's JSON
// name differs from the model's property name (`enum` is `_enum`, `x-kubernetes-validations` is
// `x_kubernetes_validations`) the field is silently dropped — a CRD applied as a plain object
// lost its enums and CEL rules. Parsing through loadYaml yields the typed model, which
// serialises back to exactly the JSON the API server expects.
import { loadYaml, type KubernetesObject } from '@kubernetes/client-node';

export function forClient<T extends KubernetesObject>(object: T): T {
  // JSON is YAML; dumpYaml would itself serialise through the models and drop the same fields.
  return loadYaml<T>(JSON.stringify(object));
}
