-- Bulk export: destinations, exports, export runs. Filled in by the bulk export work.
SELECT 1;
