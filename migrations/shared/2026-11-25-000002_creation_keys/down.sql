DROP TABLE creation_keys;
