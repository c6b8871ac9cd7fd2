import { collectLeaf } from './collect-leaf.ts';
import { readSmimePart } from './containers/read-smime-part.ts';
import {
  NESTED_SMIME,
  type SmimeKeySource,
  type SmimeVerdict,
  smimeExclusion,
} from './containers/smime-entity.ts';
import type { LeafDescription } from './describe-leaf.ts';
import type { LeafPart } from './leaf-part.ts';
import type { PartStore } from './part-store.ts';
import { checkPartCount, type WalkLimits } from './walk-limits.ts';

/** What of the walk's state an S/MIME entity reads and updates (walk-message.ts). */
export interface SmimeWalkState {
  readonly store: PartStore;
  readonly limits: WalkLimits;
  readonly storeArchives: boolean;
  readonly smimeKeys: SmimeKeySource;
  readonly parts: LeafPart[];
  readonly htmlCids: Set<string>;
  smime: SmimeVerdict | null;
  leafCount: number;
}

/** Where a level of the walk sits, beside its part numbers. */
export interface Level {
  /** The path of the S/MIME entity whose content this is (`part 1 > smime.p7m`), or null. */
  within: string | null;
  /** S/MIME layers opened around this level: signed or encrypted, at most MAX_SMIME_LAYERS. */
  layers: number;
  /** Content decrypted with these workspaces' key: its parts are their documents only; null when not encrypted. */
  decryptedFor: readonly string[] | null;
}

export const TOP_LEVEL: Level = { within: null, layers: 0, decryptedFor: null };

/** Signed inside encrypted (Outlook's and Thunderbird's order) or encrypted inside signed. */
const MAX_SMIME_LAYERS = 2;

/**
 * An S/MIME entity (docs/architecture.md, "Signed and encrypted mail"), from its decoded bytes:
 * signed data is opened, and encrypted data decrypted when an addressed workspace has the key
 * it was sent to; the content is handed to `walkContent`, to be walked in its place as the
 * same message at the same depth (its body is the message's body), its parts' paths showing
 * the entity; a signature's verdict goes to the record. Encrypted data that is not decrypted,
 * signed data that cannot be read and S/MIME inside two layers are one leaf each, skipped with
 * the reason.
 */
export async function walkSmimeEntity(
  walk: SmimeWalkState,
  decoded: AsyncIterable<Buffer>,
  where: { description: LeafDescription; depth: number; level: Level },
  walkContent: (content: Buffer, innerPrefix: number[], level: Level) => Promise<unknown>,
): Promise<void> {
  const { description, depth, level } = where;
  const { opened, bytes } =
    level.layers < MAX_SMIME_LAYERS
      ? await readSmimePart(decoded, walk.limits.maxPartSize, walk.smimeKeys)
      : { opened: null, bytes: decoded };
  if (opened?.kind === 'signed' || opened?.kind === 'decrypted') {
    if (opened.kind === 'signed') walk.smime ??= opened.verdict;
    const entity = `part ${description.partNumber} > ${description.fileName ?? 'smime.p7m'}`;
    const decryptedFor =
      opened.kind === 'decrypted' ? narrow(level.decryptedFor, opened.workspaces) : level.decryptedFor;
    await walkContent(opened.content, description.partNumber.split('.').map(Number), {
      within: level.within === null ? entity : `${level.within} > ${entity}`,
      layers: level.layers + 1,
      decryptedFor,
    });
    return;
  }
  walk.leafCount += 1;
  checkPartCount(walk.leafCount, walk.limits);
  const exclusion = opened === null ? NESTED_SMIME : smimeExclusion(opened);
  const leaf = { ...description, exclusion, index: walk.leafCount - 1, depth };
  const context = {
    store: walk.store,
    maxPartSize: walk.limits.maxPartSize,
    htmlCids: walk.htmlCids,
    storeArchives: walk.storeArchives,
  };
  walk.parts.push(within(level, await collectLeaf(bytes, leaf, context)));
}

/** Encrypted inside encrypted: only the workspaces that opened both layers. */
function narrow(outer: readonly string[] | null, inner: readonly string[]): readonly string[] {
  return outer === null ? inner : inner.filter((identifier) => outer.includes(identifier));
}

/**
 * A part as recorded, its path showing the S/MIME entity it came out of, and the workspaces
 * whose key decrypted it.
 */
export function within(level: Level, part: LeafPart): LeafPart {
  if (level.within === null) return part;
  const path = `${level.within} > ${part.path}`;
  return level.decryptedFor === null
    ? { ...part, path }
    : { ...part, path, decryptedFor: level.decryptedFor };
}
