import { Static, Type } from '@sinclair/typebox';

export const CreateWebhookSchema = Type.Object(
  {
    url: Type.String({ pattern: '^https?://\\S+$', maxLength: 2000, description: 'http(s) endpoint that receives signed POSTs' }),
    events: Type.Optional(
      Type.Array(
        Type.Union(['collapse.warning', 'job.succeeded', 'job.failed', 'job.cancelled', 'job.paused', '*'].map((e) => Type.Literal(e))),
        { minItems: 1, maxItems: 10, default: ['collapse.warning'] },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookSchema>;

const WebhookSchema = Type.Object({ id: Type.String(), url: Type.String(), events: Type.Array(Type.String()), active: Type.Boolean(), createdAt: Type.String() });
export type WebhookView = Static<typeof WebhookSchema>;
export const WebhookListSchema = Type.Object({ data: Type.Array(WebhookSchema) });
export type WebhookListView = Static<typeof WebhookListSchema>;
export const CreatedWebhookSchema = Type.Composite([WebhookSchema, Type.Object({ secret: Type.String({ description: 'whsec_… — verify the webhook-signature header with it; shown once' }) })]);
export type CreatedWebhookView = Static<typeof CreatedWebhookSchema>;
export const WebhookTestResultSchema = Type.Object({
  deliveryId: Type.String(),
  status: Type.String(),
  responseStatus: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type WebhookTestResultView = Static<typeof WebhookTestResultSchema>;
export const WebhookDeliveryListSchema = Type.Object({
  data: Type.Array(Type.Object({ id: Type.String(), eventType: Type.String(), status: Type.String(), attempts: Type.Integer(), nextAttemptAt: Type.Union([Type.String(), Type.Null()]), lastError: Type.Union([Type.String(), Type.Null()]), createdAt: Type.String() })),
});
export type WebhookDeliveryListView = Static<typeof WebhookDeliveryListSchema>;
