// Who the caller is, as Kubernetes says: the user name from a SelfSubjectReview
// (authentication.k8s.io/v1). The owner of a split is that name, because the `queuesplit-owner`
// admission policy (deploy/manifests.ts) compares spec.owner with request.userInfo.username: an
// OS user name (`vscode` in every dev container) would let two people adopt each other's splits.
// The sidecar and the extension both call this and word a refusal in their own terms.
import { AuthenticationV1Api, type KubeConfig } from '@kubernetes/client-node';

/** The ValidatingAdmissionPolicy (and its binding) that ties spec.owner to the caller. */
export const OWNER_POLICY = 'queuesplit-owner';
/** Members may create splits for anybody and update or delete any split (README "Who owns a split"). */
export const ADMINS_GROUP = 'queuesplit:admins';

/** True when an API error's Status.message is the owner policy's refusal. */
export function isOwnerPolicyDenial(message: string | undefined): boolean {
  return message !== undefined && message.includes(`ValidatingAdmissionPolicy '${OWNER_POLICY}'`);
}

/** The RBAC permission a SelfSubjectReview needs (granted by queuesplit-developer and system:basic-user). */
export const SELF_REVIEW_PERMISSION = 'create selfsubjectreviews.authentication.k8s.io';

export interface KubeIdentity {
  username: string;
  groups: string[];
}

/** Why the API server would not tell us who we are. */
export class IdentityUnknown extends Error {
  constructor(
    message: string,
    /** 403: the caller may not create a SelfSubjectReview (the permission above is missing). */
    readonly forbidden: boolean,
    /** The API error, for callers that translate transport and 401 failures themselves. */
    override readonly cause: unknown,
  ) {
    super(message);
    this.name = 'IdentityUnknown';
  }
}

const status = (err: unknown): number | undefined => {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
};

export async function reviewSelf(kc: KubeConfig): Promise<KubeIdentity> {
  let review;
  try {
    review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
  } catch (err) {
    const code = status(err);
    throw new IdentityUnknown(
      code === 403
        ? `the credentials may not ${SELF_REVIEW_PERMISSION}, which tells Queue Split your Kubernetes user name (the owner of your splits)`
        : `the SelfSubjectReview failed${code !== undefined ? ` (HTTP ${code})` : ''}`,
      code === 403,
      err,
    );
  }
  const username = review.status?.userInfo?.username ?? '';
  if (username === '')
    throw new IdentityUnknown(
      'the API server answered the SelfSubjectReview without a user name',
      false,
      undefined,
    );
  return { username, groups: review.status?.userInfo?.groups ?? [] };
}
