"""assumptions"""
