import msgreader from '@kenjiuno/msgreader';
import { cfbDirectory } from '../detect/cfb-directory.ts';
import { type ContainedEntry, ContainerError, type ContainerLimits } from './contained-file.ts';

const MsgReader = msgreader.default;

/**
 * The attachments of an Outlook item (`.msg`, MS-OXMSG), as Outlook attaches one when a user
 * forwards a message "as attachment". Read by @kenjiuno/msgreader.
 *
 * msgreader follows the compound file's sector chains without checking them for loops, so a
 * damaged or hostile FAT can keep it busy for ever or fill the heap: it runs only inside the
 * container worker (container-worker.ts), whose time and heap are bounded. What the heap
 * bound does not cover is the buffer msgreader allocates for a stream at the size the
 * directory states, so the directory is read first (cfb-directory.ts, loop-safe) and a
 * stream said to be larger than the file refuses it.
 */
export function readOutlookItem(
  bytes: Buffer,
  limits: Pick<ContainerLimits, 'maxEntries'>,
): ContainedEntry[] {
  const directory = cfbDirectory(bytes);
  if (directory === null) throw new ContainerError('it is not a compound file');
  if (!directory.complete)
    throw new ContainerError('its directory is damaged (a sector chain breaks or loops)');
  if (directory.largestStream > bytes.length) {
    throw new ContainerError(
      `its directory states a stream of ${directory.largestStream} bytes, larger than the file`,
    );
  }
  let reader: InstanceType<typeof MsgReader>;
  let attachments: ReturnType<InstanceType<typeof MsgReader>['getFileData']>['attachments'];
  try {
    reader = new MsgReader(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    const data = reader.getFileData();
    if (data.error) throw new Error(data.error);
    attachments = data.attachments ?? [];
  } catch (err) {
    throw new ContainerError(`it is not a readable Outlook item: ${describe(err)}`);
  }
  if (attachments.length > limits.maxEntries) {
    throw new ContainerError(`it holds more than the ${limits.maxEntries} files this server reads`);
  }
  return attachments.map((attachment): ContainedEntry => {
    const name = attachment.fileName ?? attachment.fileNameShort ?? attachment.name ?? null;
    if (attachment.innerMsgContent) {
      return {
        name: name ?? attachment.name ?? null,
        size: attachment.contentLength ?? 0,
        skip: 'an Outlook item inside the Outlook item, not opened (containers are opened one level deep)',
      };
    }
    try {
      const content = reader.getAttachment(attachment).content;
      return {
        name,
        declaredType: attachment.attachMimeTag?.toLowerCase() ?? null,
        bytes: Buffer.from(content.buffer, content.byteOffset, content.byteLength),
      };
    } catch (err) {
      return { name, size: attachment.contentLength ?? 0, skip: `its data cannot be read: ${describe(err)}` };
    }
  });
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
