-- CreateTable
CREATE TABLE "audit_events" (
    "id" BIGSERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_id" UUID,
    "actor_name" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "data" JSONB NOT NULL,

    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_events_created_at_id_idx" ON "audit_events"("created_at", "id");

-- CreateIndex
CREATE INDEX "audit_events_actor_id_id_idx" ON "audit_events"("actor_id", "id");

-- CreateIndex
CREATE INDEX "audit_events_target_id_id_idx" ON "audit_events"("target_id", "id");
