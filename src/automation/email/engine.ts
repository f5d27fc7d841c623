// What `action.email` sees of e-mail: the run tenant's servers and files, one send per step execution.
import type { AutomationContext } from "../context";
import type { MailSender } from "../engine/contract";
import { openFile } from "../files/service";
import { sendForRun } from "./service";

export function mailSender(ctx: AutomationContext, tenantId: string, runId: string): MailSender {
  return {
    async attachment(fileId) {
      const { file, blob } = await openFile(ctx, tenantId, fileId);
      return { filename: file.filename, contentType: file.contentType, bytes: new Uint8Array(await blob.arrayBuffer()) };
    },
    send: (message, path) => sendForRun(ctx, tenantId, runId, path, message),
  };
}
