DROP TABLE webhook_endpoints;
