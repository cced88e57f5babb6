DROP TABLE claims_aggregates;
