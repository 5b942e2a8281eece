// Issue 3: accessory model, config, decision engine.
