-- AlterTable
ALTER TABLE "usage_records" ADD COLUMN     "attempt" INTEGER NOT NULL DEFAULT 0;
