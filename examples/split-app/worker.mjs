// The worker: attaches the handlers to the declared jobs. Only the worker loads this file (and the
// mailer it needs): npx firm-queue start --require examples/split-app/worker.mjs
import { firm, sendReceipt } from "./declarations.mjs";
import { sendMail } from "./mailer.mjs";

firm.implement(sendReceipt, async ({ orderId, email, copies }, context) => {
  // The arguments were validated again before this runs; `copies` has its default.
  for (let copy = 0; copy < copies; copy++) await sendMail(email, `Receipt for order ${orderId}`, context.signal);
});

// The CLI finds the FirmQueue among this module's exports.
export { firm };
