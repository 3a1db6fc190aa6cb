// "Write Queue Config Annotation…", loaded on first use (dist/extension-annotation.js): the
// inference from the pod template, the proposal validated by core/queueConfig, and what the
// command shows and hands out. It carries zod and yaml, which the activation bundle must not.
export {
  ambiguousRoles,
  annotationText,
  declarationState,
  describeEnv,
  LIKELY,
  noSourcesSummary,
  propose,
  rulesOf,
  sameBasis,
  surveySummary,
  surveyWorkload,
  unresolvedRoles,
  validateProposal,
  type ContainerSurvey,
  type Proposal,
  type ProposalChoice,
  type ProviderSurvey,
} from './infer';
export {
  annotationPatch,
  clipboardPatch,
  kubectlPatchCommand,
  workloadYaml,
  type WorkloadRef,
} from './render';
export { declaredWorkload } from '../workloads';
export { QUEUE_CONFIG_ANNOTATION } from '../../../core/queueConfig/schema';
export { formatFieldError } from '../../../core/result';
